import { stripUrlCredentials } from '@ferry/core/transport';

/**
 * Where the SDK sends a connection's requests (`queueUrlMiddleware` of
 * @aws-sdk/middleware-sdk-sqs) when no endpoint is given in code: a request for a queue URL goes to
 * the URL's own host, and the connection's endpoint is the one configured outside the code
 * (`configured`: `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL`, the shared config file's
 * `endpoint_url`), else AWS SQS of `region`. (With an endpoint given in code every request goes to
 * it, whatever host a queue URL names: no routing is looked up then, connection.foreignHost.)
 */
export interface EndpointRouting {
  readonly configured: string | null;
  /** The region requests are signed for (lower case). */
  readonly region: string;
  /** The region's SQS hosts as the client's endpointProvider names them (regionSqsHosts). */
  readonly regionHosts: ReadonlySet<string>;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The DNS suffixes of AWS's partitions (the SDK's partitions: aws, aws-cn, aws-us-gov, aws-iso,
 * aws-iso-b, aws-iso-e, aws-iso-f, aws-eusc), plain and dual-stack. The region's own suffixes, as
 * the client's endpointProvider names them, count too (regionSqsHosts), so a partition added to the
 * SDK later is recognised for its own regions.
 */
const AWS_DNS_SUFFIXES: readonly string[] = [
  'amazonaws.com',
  'api.aws',
  'amazonaws.com.cn',
  'api.amazonwebservices.com.cn',
  'c2s.ic.gov',
  'api.aws.ic.gov',
  'sc2s.sgov.gov',
  'api.aws.scloud',
  'cloud.adc-e.uk',
  'api.cloud-aws.adc-e.uk',
  'csp.hci.ic.gov',
  'api.aws.hci.ic.gov',
  'amazonaws.eu',
  'api.amazonwebservices.eu',
];

/** A DNS label that names an AWS region (`us-east-1`, `us-gov-west-1`, `eusc-de-east-1`, …). */
const REGION_LABEL = /^[a-z]{2,4}(?:-[a-z]+)+-\d{1,2}$/;

/** SQS's legacy hosts that name no region in a label: the region they serve. */
const LEGACY_HOST_REGIONS: ReadonlyMap<string, string> = new Map([['queue.amazonaws.com', 'us-east-1']]);

/** A URL's host name as one key: lower case, without a trailing dot. */
function hostName(parsed: URL): string {
  return parsed.hostname.toLowerCase().replace(/\.$/, '');
}

/** Parses an http(s) URL; null for anything else. */
function httpUrl(url: string): URL | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed : null;
}

/**
 * The host a request for `url` really connects to, as one key: the host name (lower case, without
 * a trailing dot; the loopback aliases `localhost`, `127.0.0.1` and `[::1]` as one) and the port it
 * uses (`URL.port` is '' for the scheme's default: 443 for https, 80 for http). Null for a
 * value that is no http(s) URL.
 */
export function hostKey(url: string): string | null {
  const parsed = httpUrl(url);
  if (parsed === null) return null;
  const name = hostName(parsed);
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : '80') : parsed.port;
  return `${LOOPBACK.has(name) ? 'loopback' : name}:${port}`;
}

/** One queue URL as a key: its hostKey and its path (without a trailing slash). Null for no URL. */
export function queueKey(url: string): string | null {
  const key = hostKey(url);
  return key === null ? null : `${key}${new URL(url).pathname.replace(/\/$/, '')}`;
}

/** The host and port a request for `url` connects to, as shown in an error (`127.0.0.1:443`). */
export function shownHost(url: string): string {
  const parsed = httpUrl(url);
  if (parsed === null) return stripUrlCredentials(url);
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : '80') : parsed.port;
  return `${parsed.hostname}:${port}`;
}

/**
 * The SQS host names of `region` as the SDK's own endpoint resolution names them
 * (`endpointProvider`, the client's config), plain, FIPS, dual-stack and both: every one a request
 * of the client may go to for that region. Empty when the provider cannot tell (another SDK build,
 * a region it does not take).
 */
export function regionSqsHosts(endpointProvider: unknown, region: string): ReadonlySet<string> {
  const hosts = new Set<string>();
  // A value that is no region name: the SDK logs its failure to build a URL of it.
  if (typeof endpointProvider !== 'function' || !/^[a-z0-9-]+$/.test(region)) return hosts;
  for (const UseDualStack of [false, true]) {
    for (const UseFIPS of [false, true]) {
      try {
        const resolved: unknown = (endpointProvider as (params: object, context: object) => unknown)(
          { Region: region, UseDualStack, UseFIPS },
          {},
        );
        const url = (resolved as { url?: unknown } | null)?.url;
        if (url instanceof URL) hosts.add(hostName(url));
      } catch {
        // A combination the partition does not offer.
      }
    }
  }
  return hosts;
}

/**
 * Whether `parsed` is an AWS SQS host of `region` on the scheme's default port: one of the
 * region's hosts the SDK names (regionHosts), or any host under an AWS partition's DNS suffix that
 * names no other region (a label such as `eu-west-1`; `queue.amazonaws.com` is us-east-1's). The
 * latter is conservative on purpose: dual-stack, legacy (`<region>.queue.amazonaws.com`) and VPC
 * endpoint hosts (`vpce-….sqs.<region>.vpce.amazonaws.com`) of the region reach its SQS too, and
 * a failure there may be its outage.
 */
function isRegionAwsHost(parsed: URL, region: string, regionHosts: ReadonlySet<string>): boolean {
  if (parsed.port !== '') return false;
  const name = hostName(parsed);
  if (regionHosts.has(name)) return true;
  const suffixes = [...AWS_DNS_SUFFIXES];
  for (const host of regionHosts) {
    const at = host.indexOf(`.${region}.`);
    if (at >= 0) suffixes.push(host.slice(at + region.length + 2));
  }
  if (!suffixes.some((suffix) => name === suffix || name.endsWith(`.${suffix}`))) return false;
  const named = name.split('.').filter((label) => REGION_LABEL.test(label));
  const legacy = LEGACY_HOST_REGIONS.get(name);
  if (legacy !== undefined) named.push(legacy);
  return named.every((label) => label === region);
}

/**
 * Why a request for the queue at `queueUrl` does not go to the connection's endpoint (a text
 * naming its host and the endpoint), or null when it does or may (README, "Queue hosts"): the
 * configured endpoint's host (loopback aliases of a loopback endpoint on the same port too), an
 * AWS SQS host of the connection's region (isRegionAwsHost; with an endpoint configured too: a VPC
 * endpoint's queues have the regional URL), or a queue URL the endpoint itself answered for a
 * queue name or a queue it created (`answered`: keys of queueKey).
 */
export function foreignQueueHost(
  queueUrl: string,
  routing: EndpointRouting,
  answered: ReadonlySet<string>,
): string | null {
  const parsed = httpUrl(queueUrl);
  // Not a URL the SDK can route: it sends the request to the endpoint.
  if (parsed === null) return null;
  const key = queueKey(queueUrl);
  if (key !== null && answered.has(key)) return null;
  if (routing.configured !== null) {
    const endpoint = hostKey(routing.configured);
    if (endpoint === null || endpoint === hostKey(queueUrl)) return null;
  }
  if (isRegionAwsHost(parsed, routing.region, routing.regionHosts)) return null;
  const endpoint =
    routing.configured !== null
      ? stripUrlCredentials(routing.configured)
      : `AWS SQS of region ${routing.region}`;
  return `${shownHost(queueUrl)} is not the connection's endpoint (${endpoint})`;
}
