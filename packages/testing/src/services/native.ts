import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { FerryConfigError, FerryError } from '@ferry/core';
import { Client } from 'pg';
import { clearTimeout, setTimeout } from '../realTimers';
import { acceptsConnection, endpointPort } from './docker';
import type { FerryService } from './images';

export interface ServiceEndpoints {
  /** A PostgreSQL server URL (database `test`, user postgres); create databases on it. */
  readonly databaseUrl: string;
  readonly amqpUrl: string;
  readonly kafkaBrokers: readonly string[];
  readonly sqsEndpoint: string;
}

/**
 * A variable this module reads, an empty one read as unset (a shell's `VAR=`, a CI template's
 * empty variable): one rule for every FERRY_SERVICES_* and endpoint variable (review 95: an empty
 * FERRY_SERVICES_MODE was refused as a value while an empty FERRY_SERVICES_SCRIPT was unset).
 */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** What scripts/services serves, overridable by the same variables ferry's own tests read. */
export function nativeEndpoints(env: NodeJS.ProcessEnv = process.env): ServiceEndpoints {
  return {
    databaseUrl: envValue(env, 'FERRY_DATABASE_URL') ?? 'postgresql://postgres@127.0.0.1:5432/test',
    amqpUrl: envValue(env, 'FERRY_AMQP_URL') ?? 'amqp://guest:guest@127.0.0.1:5672',
    kafkaBrokers: (envValue(env, 'FERRY_KAFKA_BROKERS') ?? '127.0.0.1:9092').split(','),
    sqsEndpoint: envValue(env, 'FERRY_SQS_ENDPOINT') ?? 'http://127.0.0.1:9324',
  };
}

/**
 * `script` when it exists, else FERRY_CONFIG_INVALID naming `option` (the variable or option
 * that gave it): spawned, a missing script failed as ENOENT, read as a transport error.
 */
export function existingScript(option: string, script: string): string {
  if (existsSync(script)) return script;
  throw new FerryConfigError(option, `no file at ${script}: name ferry's scripts/services`);
}

/**
 * `scripts/services` of ferry's repository: FERRY_SERVICES_SCRIPT, else found above `start`, else
 * `missing` (an application installed from npm has none: no tarball holds it).
 */
export function findServicesScript(
  start: string,
  env: NodeJS.ProcessEnv = process.env,
): string | { readonly missing: string } {
  const named = envValue(env, 'FERRY_SERVICES_SCRIPT');
  if (named !== undefined) return existingScript('FERRY_SERVICES_SCRIPT', named);
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'scripts', 'services');
    if (existsSync(candidate)) return candidate;
    if (dir === path.dirname(dir)) return { missing: `no scripts/services above ${start}` };
  }
}

/**
 * `scripts/services up <services>`: reuses what is already listening, starts the rest from the
 * machine's installation. Never stops anything (other processes share these services). At
 * `timeoutMs` the script's process group is ended (what it started in the background under its own
 * session, setsid, is not in it) and the call rejects FERRY_TIMEOUT naming the deadline (review 90:
 * execFile's timeout ended the script alone and said "up failed" with whatever it had printed).
 */
export function startNative(
  script: string,
  services: readonly FerryService[],
  timeoutMs: number,
): Promise<void> {
  const names = services.map((s) => (s === 'sqs' ? 'elasticmq' : s));
  return new Promise((resolve, reject) => {
    // Its own process group, so that the deadline ends the script's children too.
    const child = spawn(script, ['up', ...names], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT_CHARS);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let settled = false;
    const settle = (error: FerryError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A process the script left in the background may hold its pipes: not waited for.
      child.stdout.destroy();
      child.stderr.destroy();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
      settle(
        new FerryError(
          'FERRY_TIMEOUT',
          `${script} up ${names.join(' ')} did not finish within ${timeoutMs} ms (timeoutMs); its processes were ended. Its output: ${output.trim() || '(none)'}`,
        ),
      );
    }, timeoutMs);
    child.once('error', (error) =>
      settle(
        new FerryError('FERRY_TRANSPORT_ERROR', `${script} up could not run: ${error.message}`, {
          cause: error,
        }),
      ),
    );
    // Its output is read until its pipes close, or for OUTPUT_GRACE_MS after it exited: a process
    // the script left in the background may hold them for ever.
    child.once('exit', (code, signal) => {
      const done = () =>
        settle(
          code === 0
            ? null
            : new FerryError(
                'FERRY_TRANSPORT_ERROR',
                `${script} up failed (${signal ?? `exit ${code}`}): ${output.trim() || '(no output)'}`,
              ),
        );
      const grace = setTimeout(done, OUTPUT_GRACE_MS);
      child.once('close', () => {
        clearTimeout(grace);
        done();
      });
    });
  });
}

/** How long the script's output is read after it exited. */
const OUTPUT_GRACE_MS = 1_000;

/** How much of the script's output a failure carries (its end, where the reason is). */
const OUTPUT_KEPT_CHARS = 8_000;

/** The variable that names each service's endpoint on the native path. */
const VARIABLES: Readonly<Record<FerryService, string>> = {
  postgres: 'FERRY_DATABASE_URL',
  rabbitmq: 'FERRY_AMQP_URL',
  kafka: 'FERRY_KAFKA_BROKERS',
  sqs: 'FERRY_SQS_ENDPOINT',
};

/** The port scripts/services serves each service on, on 127.0.0.1 (its own variables, else its default). */
function scriptPort(service: FerryService, env: NodeJS.ProcessEnv): number {
  const [name, fallback] = (
    {
      postgres: ['FERRY_PG_PORT', 5432],
      rabbitmq: ['FERRY_RABBITMQ_PORT', 5672],
      kafka: ['FERRY_KAFKA_PORT', 9092],
      sqs: ['FERRY_SQS_PORT', 9324],
    } as const
  )[service];
  return Number(envValue(env, name) ?? fallback);
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'amqp:': 5672,
  'amqps:': 5671,
  'http:': 80,
  'https:': 443,
};

type Address = { host: string; port: number } | { path: string };

/** One service's endpoint on the native path: the variable naming it and where it is reached. */
interface NativeEndpoint {
  readonly service: FerryService;
  readonly variable: string;
  /** Each address a client connects to (Kafka: every bootstrap broker). */
  readonly addresses: readonly Address[];
}

function shown(address: Address): string {
  return 'path' in address ? address.path : `${address.host}:${address.port}`;
}

/**
 * Where pg connects with `text`, read by pg itself (review 91: a reading of our own refused the
 * forms pg takes: a URL-encoded socket host, `?host=`, `?port=`, no host, `socket:`): a host and
 * port, or the Unix socket of a host that is a directory. Never its credentials.
 */
function pgAddress(variable: string, text: string): Address {
  // pg takes a relative text as a path below host `base`: a text of no scheme is a mistake.
  if (!/^([a-z][a-z0-9+.-]*:|\/)/i.test(text)) {
    throw new FerryConfigError(
      variable,
      'does not parse as a URL (scheme://[user[:password]@]host[:port]/...)',
    );
  }
  let client: Client;
  try {
    // Only reads the configuration (and the files of sslcert/sslkey/sslrootcert): connects nowhere.
    client = new Client({ connectionString: text });
  } catch {
    // Not echoed: what does not parse may still carry a password.
    throw new FerryConfigError(variable, 'is not a connection string pg can read');
  }
  const { host, port } = client;
  if (host.startsWith('/')) return { path: path.join(host, `.s.PGSQL.${endpointPort(variable, port)}`) };
  return { host: host.replace(/^\[(.*)\]$/, '$1'), port: endpointPort(variable, port) };
}

/** host:port of a URL (its scheme's default port); never its credentials. */
function urlAddress(variable: string, text: string): Address {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not echoed: a URL that does not parse may still carry a password.
    throw new FerryConfigError(
      variable,
      'does not parse as a URL (scheme://[user[:password]@]host[:port]/...)',
    );
  }
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  if (port === undefined)
    throw new FerryConfigError(variable, `has a scheme (${url.protocol}) of no known port`);
  if (url.hostname === '') throw new FerryConfigError(variable, 'names no host');
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: endpointPort(variable, port) };
}

/** Where `service` is reached, from the endpoints (FERRY_* or the defaults): FERRY_CONFIG_INVALID if unreadable. */
function nativeEndpoint(service: FerryService, endpoints: ServiceEndpoints): NativeEndpoint {
  const variable = VARIABLES[service];
  if (service === 'kafka') {
    const addresses = endpoints.kafkaBrokers.map((broker) => {
      const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(broker.trim());
      if (!match) throw new FerryConfigError(variable, `broker ${JSON.stringify(broker)} is not host:port`);
      return { host: match[1]!, port: endpointPort(variable, Number(match[2])) };
    });
    return { service, variable, addresses };
  }
  if (service === 'postgres')
    return { service, variable, addresses: [pgAddress(variable, endpoints.databaseUrl)] };
  const text = { rabbitmq: endpoints.amqpUrl, sqs: endpoints.sqsEndpoint }[service];
  return { service, variable, addresses: [urlAddress(variable, text)] };
}

/** True when `endpoint` is the one scripts/services serves: 127.0.0.1 (or localhost) on its port. */
function servedByScript(endpoint: NativeEndpoint, env: NodeJS.ProcessEnv): boolean {
  const [address] = endpoint.addresses;
  return (
    endpoint.addresses.length === 1 &&
    address !== undefined &&
    'host' in address &&
    (address.host === '127.0.0.1' || address.host === 'localhost') &&
    address.port === scriptPort(endpoint.service, env)
  );
}

/** How long each endpoint has to accept a connection once the script is done. */
const ANSWER_DEADLINE_MS = 10_000;

/**
 * The native path: `scripts/services up` for the services whose endpoint is the script's own
 * (127.0.0.1 on its port), when there is a script (without one, those must already listen); an endpoint the user named elsewhere (another host, port, socket) is the
 * user's own service, which the script can neither check nor start. Then every endpoint handed out
 * must accept a connection within its deadline, else FERRY_CONFIG_INVALID naming its variable and
 * address (review 90: a mistyped port was handed out because the script found ferry's defaults).
 */
export async function startNativeServices(
  services: readonly FerryService[],
  script: () => string | { readonly missing: string },
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServiceEndpoints> {
  const endpoints = nativeEndpoints(env);
  const plan = services.map((service) => nativeEndpoint(service, endpoints));
  const scripts = plan.filter((endpoint) => servedByScript(endpoint, env)).map((e) => e.service);
  // No script (review 106: an application installed from npm): the services already listening
  // are the ones it would have reused; one that is not listening is refused below.
  const found = scripts.length > 0 ? script() : null;
  if (typeof found === 'string') await startNative(found, scripts, timeoutMs);
  const deadlineMs = Math.min(timeoutMs, ANSWER_DEADLINE_MS);
  await Promise.all(
    plan.flatMap(({ service, variable, addresses }) =>
      addresses.map(async (address) => {
        if (await acceptsConnection(address, deadlineMs)) return;
        if (found !== null && typeof found !== 'string' && scripts.includes(service)) {
          throw new FerryConfigError(
            'nativeScript',
            `nothing accepted a connection at ${shown(address)} (${service}) within ${deadlineMs} ms, and ${found.missing} to start it: start the service there, set FERRY_SERVICES_SCRIPT (or nativeScript) to ferry's scripts/services, or make Docker reachable`,
          );
        }
        throw new FerryConfigError(
          variable,
          `nothing accepted a connection at ${shown(address)} within ${deadlineMs} ms: start the service there or correct ${variable}`,
        );
      }),
    ),
  );
  return endpoints;
}
