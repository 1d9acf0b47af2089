import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clearableDeadline } from '../deadline';
import { FerryConfigError } from '../errors';
import { describeTransportError } from '../transport/errors';
import {
  integerOption,
  knownKeysOption,
  nonEmptyOption,
  received,
  requiredOptions,
  type OptionKeys,
} from '../optionChecks';

/** What serveMetrics needs of a registry (a prom-client Registry has both). */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

export interface ServeMetricsOptions {
  registry: MetricsSource;
  /** Default 9464; 0 picks a free port (see `port` of the result). */
  port?: number;
  /** Default '127.0.0.1' (this host only); '0.0.0.0' for every interface, e.g. in a container. */
  host?: string;
  /**
   * Default '/metrics'. A URL path as requests send it (its own pathname): printable ASCII,
   * percent-encoded where a URL encodes; a query, fragment, space, backslash, dot segment or
   * leading '//' is refused (FerryConfigError on `path`), so `url` always answers.
   */
  path?: string;
  /**
   * Default 10,000 (1..600,000): a registry's `metrics()` that has not answered by then (a
   * collector waiting on a silent service) is answered 500, `metrics failed: no answer within N
   * ms`, instead of holding the scrape and its socket for ever.
   */
  timeoutMs?: number;
}

export interface MetricsServer {
  /** e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and ends open connections; safe to call twice. */
  close(): Promise<void>;
}

const KEYS = {
  registry: true,
  port: true,
  host: true,
  path: true,
  timeoutMs: true,
} satisfies OptionKeys<ServeMetricsOptions>;

/**
 * A minimal HTTP endpoint for Prometheus: GET (or HEAD) `path` answers the registry's text in
 * its content type, any other path 404, any other method 405; a failing registry 500.
 */
export async function serveMetrics(options: ServeMetricsOptions): Promise<MetricsServer> {
  requiredOptions(options, 'registry');
  options = knownKeysOption('', options, KEYS);
  const { registry } = options;
  if (typeof registry?.metrics !== 'function') {
    throw new FerryConfigError('registry', `must be a prom-client Registry, got ${received(registry)}`);
  }
  // Sent as the Content-Type of every scrape: one Node refuses (none, a line break) made each
  // answer throw, a rejection of the request handler (an unhandled rejection ends the process).
  const { contentType } = registry;
  if (typeof contentType !== 'string' || !CONTENT_TYPE.test(contentType)) {
    throw new FerryConfigError(
      'registry',
      `must have a contentType: a header value (printable text, no line break), got ${received(contentType)}`,
    );
  }
  const port = integerOption('port', options.port ?? 9464, 0, 65_535);
  const host = nonEmptyOption('host', options.host ?? '127.0.0.1');
  const path = nonEmptyOption('path', options.path ?? '/metrics');
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs ?? 10_000, 1, 600_000);
  if (!path.startsWith('/')) throw new FerryConfigError('path', `must start with '/', got ${received(path)}`);
  // Requests are matched on their pathname (pathOf): a path that is not its own pathname (a
  // query, fragment, space, non-ASCII, backslash, dot segment, '//') would answer no request,
  // its own `url` included.
  if (pathOf(path) !== path) {
    throw new FerryConfigError(
      'path',
      `must be a URL path as requests send it: printable ASCII, percent-encoded where a URL encodes, without query, fragment, spaces, backslashes, '.' or '..' segments or a leading '//', got ${received(path)}`,
    );
  }

  // answer() never rejects (see it); were it to, the socket is ended rather than left hanging.
  const server = createServer((request, response) => {
    answer(registry, path, timeoutMs, request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new FerryConfigError('port', `cannot listen on ${host}:${port}: ${error.code ?? error.message}`),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${bound}${path}`,
    port: bound,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

async function answer(
  registry: MetricsSource,
  path: string,
  timeoutMs: number,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const head = request.method === 'HEAD';
  if (pathOf(request.url) !== path) return send(response, 404, TEXT, 'not found\n', head);
  if (request.method !== 'GET' && !head) {
    response.setHeader('Allow', 'GET, HEAD');
    return send(response, 405, TEXT, 'method not allowed\n', head);
  }
  let body: unknown;
  const deadline = clearableDeadline(timeoutMs);
  try {
    body = await Promise.race([
      registry.metrics(),
      new Promise<never>((_resolve, reject) =>
        deadline.signal.addEventListener('abort', () =>
          reject(new Error(`no answer within ${timeoutMs} ms`)),
        ),
      ),
    ]);
  } catch (error) {
    // What failed, read totally and without a URL's user and password: the answer goes to
    // whoever can reach the port, and a collector's error may quote a connection string.
    return send(response, 500, TEXT, `metrics failed: ${describeTransportError(error)}\n`, head);
  } finally {
    deadline.clear();
  }
  // A source of the application's own (JavaScript, or typed loosely) may answer no text: said so,
  // not a reset connection (Buffer.byteLength threw, review 91).
  if (typeof body !== 'string') {
    return send(
      response,
      500,
      TEXT,
      `metrics failed: the registry answered ${describeTransportError(received(body))}, not text\n`,
      head,
    );
  }
  send(response, 200, registry.contentType, body, head);
}

const TEXT = 'text/plain; charset=utf-8';

/** A Content-Type value Node's HTTP server sends: visible ASCII and spaces or tabs, not empty. */
const CONTENT_TYPE = /^[\t\x20-\x7e]*[\x21-\x7e][\t\x20-\x7e]*$/;

function pathOf(url: string | undefined): string | null {
  try {
    return new URL(url ?? '/', 'http://metrics').pathname;
  } catch {
    return null;
  }
}

function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  head: boolean,
): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  response.end(head ? undefined : body);
}
