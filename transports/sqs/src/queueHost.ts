import { stripUrlCredentials } from '@ferry/core/transport';
import { awsQueueRegion } from './queueUrl';

/**
 * Where the SDK sends a connection's requests (`queueUrlMiddleware` of
 * @aws-sdk/middleware-sdk-sqs): with an endpoint given to the client (`endpoint`), or
 * `useQueueUrlAsEndpoint: false`, every request goes to that endpoint, whatever host a queue URL
 * names (`fixed`); otherwise a request for a queue URL goes to the URL's own host, and the
 * connection's endpoint is the one configured outside the code (`configured`:
 * `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL`, the shared config file's `endpoint_url`), else AWS
 * SQS of `region`.
 */
export interface EndpointRouting {
  readonly fixed: boolean;
  readonly configured: string | null;
  readonly region: string | null;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The host a request for `url` really connects to, as one key: the host name (lower case, without
 * a trailing dot; the loopback aliases `localhost`, `127.0.0.1` and `[::1]` as one) and the port it
 * uses (`URL.port` is '' for the scheme's default: 443 for https, 80 for http). Null for a
 * value that is no http(s) URL.
 */
export function hostKey(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  const name = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : '80') : parsed.port;
  return `${LOOPBACK.has(name) ? 'loopback' : name}:${port}`;
}

/** The host and port a request for `url` connects to, as shown in an error (`127.0.0.1:443`). */
export function shownHost(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : '80') : parsed.port;
    return `${parsed.hostname}:${port}`;
  } catch {
    return stripUrlCredentials(url);
  }
}

/**
 * Why a request for the queue at `queueUrl` does not go to the connection's endpoint (a text
 * naming its host and the endpoint), or null when it does: always with a `fixed` endpoint; else
 * when the URL's host is the configured endpoint's (loopback aliases of a loopback endpoint on the
 * same port too), one of the region's AWS SQS hosts on its default port when no endpoint is
 * configured, or a host the endpoint itself named in a queue URL it answered (`answered`: keys of
 * hostKey, from GetQueueUrl and CreateQueue).
 */
export function foreignQueueHost(
  queueUrl: string,
  routing: EndpointRouting,
  answered: ReadonlySet<string>,
): string | null {
  if (routing.fixed) return null;
  const key = hostKey(queueUrl);
  // Not a URL the SDK can route: it sends the request to the endpoint.
  if (key === null || answered.has(key)) return null;
  if (routing.configured !== null) {
    const endpoint = hostKey(routing.configured);
    if (endpoint === null || endpoint === key) return null;
    return `${shownHost(queueUrl)} is not the connection's endpoint (${stripUrlCredentials(routing.configured)})`;
  }
  if (routing.region === null) return null;
  if (awsQueueRegion(queueUrl) === routing.region.toLowerCase() && new URL(queueUrl).port === '') return null;
  return `${shownHost(queueUrl)} is not the connection's endpoint (AWS SQS of region ${routing.region})`;
}
