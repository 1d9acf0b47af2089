import { Client } from 'pg';
import type { Logger } from '../observe/logger';
import { reconnectDelayMs } from '../backoff';
import { FerryConfigError } from '../errors';
import { CONNECTION_END_WAIT_MS, destroyClientSocket, endClientWithin } from '../sql/endConnection';

export interface ListenerOptions {
  connectionString: string;
  /** A validated identifier (LISTEN cannot take a parameter). */
  channel: string;
  reconnectInitialDelay: number;
  reconnectMaxDelay: number;
  /** Every keepaliveInterval ms the connection must answer `SELECT 1` within keepaliveTimeout ms. */
  keepaliveInterval: number;
  keepaliveTimeout: number;
  onNotify: () => void;
  logger: Logger;
}

/**
 * Checks a LISTEN connection string as node-postgres will read it (the URL, and the certificate
 * files its `sslrootcert` / `sslcert` / `sslkey` name), throwing FerryConfigError naming `option`:
 * read later, inside start(), it threw a raw TypeError or ENOENT and left the relay or worker
 * "running" with no poll loop (review 38). The error never quotes the string (it holds a password).
 */
export function checkListenUrl(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new FerryConfigError(option, 'must be a non-empty PostgreSQL connection string');
  }
  try {
    new Client({ connectionString: value });
  } catch (error) {
    throw new FerryConfigError(
      option,
      `is not a connection string node-postgres can use (${listenFault(error)})`,
    );
  }
  return value;
}

/** Why node-postgres refused a connection string: its error's message, never the string itself. */
function listenFault(error: unknown): string {
  if (error instanceof TypeError && /Invalid URL/i.test(error.message)) return 'not a valid URL';
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

/**
 * LISTEN on a dedicated connection. On error or disconnect it reconnects with capped
 * exponential back-off and calls onNotify once after every (re)connect, since
 * notifications sent while disconnected are lost. A connection that dies silently (no
 * FIN, no RST) is found by a keepalive query with a deadline, then dropped and replaced;
 * connecting has the same deadline. Polling never depends on it.
 */
export class NotifyListener {
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** start() was called: it connects once (see start()). */
  private started = false;
  private keepalive: NodeJS.Timeout | undefined;
  private probing = false;
  /** Successful connects so far (1 after the first, 2 after a reconnect, ...). */
  connects = 0;
  /** Notifications received so far. */
  notifications = 0;

  constructor(private readonly options: ListenerOptions) {}

  /** How long closing waits for the server to end the connection (CONNECTION_END_WAIT_MS at most). */
  private get endWaitMs(): number {
    return Math.min(this.options.keepaliveTimeout, CONNECTION_END_WAIT_MS);
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /**
   * Connects (and reconnects for as long as it is open). Once only: a relay or inbox worker whose
   * loop stopped on its own (an ended pool) keeps its LISTEN connection, and its start() starts
   * the loop, and so this, again. A second connect beside the open one was no longer referenced,
   * so close() ended only the last: each restart left a LISTEN connection open for the life of the
   * process (review 88).
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.connect();
  }

  /** The connect attempt in progress (its client not yet listening); close() ends it. */
  private connecting: { client: Client; attempt: Promise<void> } | undefined;

  private connect(): Promise<void> {
    if (this.closed) return Promise.resolve();
    let client: Client;
    try {
      // The LISTEN statement has the connect's deadline too (query_timeout): one a silent network
      // left unanswered was waited for for ever, the keepalive not started yet (review 38).
      client = new Client({
        connectionString: this.options.connectionString,
        connectionTimeoutMillis: this.options.keepaliveTimeout,
        query_timeout: this.options.keepaliveTimeout,
      });
    } catch (error) {
      // Checked at configuration (checkListenUrl); a certificate file removed since throws here:
      // a failed connect like any other (logged, retried after back-off), never start()'s throw.
      this.retryLater(new Error(`LISTEN connection string unusable: ${listenFault(error)}`));
      return Promise.resolve();
    }
    const attempt = this.listen(client).finally(() => {
      if (this.connecting?.client === client) this.connecting = undefined;
    });
    this.connecting = { client, attempt };
    return attempt;
  }

  private async listen(client: Client): Promise<void> {
    client.on('notification', () => {
      this.notifications += 1;
      this.options.onNotify();
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.options.channel}"`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.closed) {
      await endClientWithin(client, this.endWaitMs);
      return;
    }
    this.client = client;
    this.failures = 0;
    this.connects += 1;
    clearInterval(this.keepalive);
    this.keepalive = setInterval(() => void this.probe(client), this.options.keepaliveInterval);
    this.keepalive.unref?.();
    this.options.onNotify();
  }

  /** Drops the connection unless it answers `SELECT 1` within keepaliveTimeout. */
  private async probe(client: Client): Promise<void> {
    if (this.probing || this.client !== client) return;
    this.probing = true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = this.options.keepaliveTimeout;
    const silent = new Promise<Error>((resolve) => {
      timer = setTimeout(
        () => resolve(new Error(`LISTEN connection did not answer its keepalive within ${timeout} ms`)),
        timeout,
      );
    });
    const answer = client.query('SELECT 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    const failure = await Promise.race([answer, silent]);
    clearTimeout(timer);
    this.probing = false;
    if (failure !== undefined && this.client === client) this.lost(client, failure);
  }

  private lost(client: Client, error: unknown): void {
    if (this.client === client) {
      this.client = undefined;
      clearInterval(this.keepalive);
    }
    client.removeAllListeners('end');
    client.removeAllListeners('error');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    destroyClientSocket(client);
    this.retryLater(error);
  }

  /** Schedules the next connect after back-off (once), logging why. */
  private retryLater(error: unknown): void {
    if (this.closed || this.timer) return;
    const delay = reconnectDelayMs(
      this.options.reconnectInitialDelay,
      this.options.reconnectMaxDelay,
      this.failures,
    );
    this.failures += 1;
    this.options.logger.warn(
      { err: error, delayMs: delay },
      `ferry LISTEN connection (channel ${this.options.channel}) lost; reconnecting`,
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, delay);
  }

  /** Ends the connection, a connect attempt in progress included: none is left open when it resolves. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.keepalive);
    clearTimeout(this.timer);
    this.timer = undefined;
    const connecting = this.connecting;
    if (connecting) {
      destroyClientSocket(connecting.client);
      await connecting.attempt;
    }
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await endClientWithin(client, this.endWaitMs);
    }
  }
}
