import { Client } from 'pg';
import type { Logger } from '../observe/logger';
import { reconnectDelayMs } from './backoff';

export interface ListenerOptions {
  connectionString: string;
  /** Validated by resolveOutboxOptions (an identifier; LISTEN cannot take a parameter). */
  channel: string;
  reconnectInitialDelay: number;
  reconnectMaxDelay: number;
  onNotify: () => void;
  logger: Logger;
}

/**
 * LISTEN on a dedicated connection. On error or disconnect it reconnects with capped
 * exponential back-off and calls onNotify once after every (re)connect, since
 * notifications sent while disconnected are lost. Polling never depends on it.
 */
export class NotifyListener {
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** Successful connects so far (1 after the first, 2 after a reconnect, ...). */
  connects = 0;
  /** Notifications received so far. */
  notifications = 0;

  constructor(private readonly options: ListenerOptions) {}

  get connected(): boolean {
    return this.client !== undefined;
  }

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client({ connectionString: this.options.connectionString });
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
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.failures = 0;
    this.connects += 1;
    this.options.onNotify();
  }

  private lost(client: Client, error: unknown): void {
    if (this.client === client) this.client = undefined;
    client.removeAllListeners('end');
    client.removeAllListeners('error');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.closed || this.timer) return;
    const delay = reconnectDelayMs(
      this.options.reconnectInitialDelay,
      this.options.reconnectMaxDelay,
      this.failures,
    );
    this.failures += 1;
    this.options.logger.warn(
      { err: error, delayMs: delay },
      'ferry outbox LISTEN connection lost; reconnecting',
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, delay);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
