import { unescape } from 'node:querystring';
import { installDeepHeaderCut } from './deepHeaders';
import * as amqp from 'amqplib';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { FerryConfigError, type Logger } from '@ferry/core';
import { abortableDelay, backoffDelay, inRootContext, onAbort, received } from '@ferry/core/transport';
import { ChannelsExhaustedError, closedError, describeError, transportError } from './errors';
import { CLOSE_ANSWER_MS } from './waits';
import { settlesWithin } from '@ferry/core/transport';
import { resolveConnectionOptions, type ConnectionOptions, type ResolvedConnectionOptions } from './options';

/** Called with every new connection, so channel setup is replayed after each reconnect. */
export type ConnectionSetup = (connection: ChannelModel) => Promise<void> | void;

/** Told each failed connect attempt and the wait before the next one. */
export type ConnectRetryListener = (error: unknown, retryInMs: number) => void;

/**
 * One AMQP connection that reconnects with backoff until closed. `connect()` and `close()`
 * are safe to call any number of times; every wait is cancelled by `close()`.
 */
export class RabbitConnection {
  readonly options: ResolvedConnectionOptions;

  /**
   * The user the connection authenticates as (its URL's, amqplib's `guest` when the URL names
   * none): the only `user-id` property RabbitMQ lets it publish.
   */
  get user(): string {
    const name = new URL(this.options.url).username;
    return name === '' ? 'guest' : decodeURIComponent(name);
  }
  private readonly setups = new Set<ConnectionSetup>();
  private readonly retryListeners = new Set<ConnectRetryListener>();
  private readonly closing = new AbortController();
  private readonly waiters = new Set<(model: ChannelModel) => void>();
  private model: ChannelModel | null = null;
  /** The connection close() is closing (its close-ok awaited), for destroy(). */
  private closingModel: ChannelModel | null = null;
  /** The broker's reason while it blocks the current connection (connection.blocked), else null. */
  private blockedReason: string | null = null;
  private loop: Promise<void> | null = null;
  private firstConnect: Promise<void> | null = null;
  private closePromise: Promise<void> | null = null;

  /**
   * `fallback.logger`: where the connection logs when its options name no logger (a component
   * that makes its own connection passes its logger).
   */
  constructor(options: ConnectionOptions, fallback: { readonly logger?: Logger } = {}) {
    this.options = resolveConnectionOptions(options, '', fallback.logger);
    installDeepHeaderCut();
  }

  get current(): ChannelModel | null {
    return this.model;
  }

  /**
   * Why the broker blocks the current connection, or null: a node under a resource alarm (memory
   * or disk) stops reading every connection that publishes until the alarm clears, so nothing
   * published on it is confirmed meanwhile (RabbitMQ's connection.blocked, e.g. "low on memory").
   */
  get blocked(): string | null {
    return this.blockedReason;
  }

  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /**
   * Starts the connection loop and resolves once connected; rejects with FERRY_CLOSED if closed
   * first. The loop retries until connected or closed, so without `signal` this waits as long as
   * the broker is unreachable: `signal` bounds the wait (FERRY_TRANSPORT_ERROR when it aborts; the
   * loop goes on, and a later connect() or publish finds the connection once it is up).
   */
  connect(signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(closedError('RabbitMQ connection'));
    if (!this.firstConnect) {
      this.firstConnect = this.waitForConnection().then(() => undefined);
      // Awaited only by callers without a signal: rejected at close() with nobody waiting on it,
      // it must not be an unhandled rejection.
      this.firstConnect.catch(() => undefined);
      // In the root context: every socket it opens, and the callbacks amqplib calls from their
      // events (a consumer's deliveries), run outside the span of whoever connected first.
      this.loop = inRootContext(() => this.run());
    }
    if (signal === undefined) return this.firstConnect;
    return this.waitForConnection(signal).then(() => undefined);
  }

  /** Registers a setup that runs on the current connection (if any) and on every reconnect. */
  onConnected(setup: ConnectionSetup): () => void {
    this.setups.add(setup);
    if (this.model) void this.runSetup(setup, this.model);
    return () => this.setups.delete(setup);
  }

  /** Registers a listener for failed connect attempts (consumers report them as `disconnected`). */
  onConnectRetry(listener: ConnectRetryListener): () => void {
    this.retryListeners.add(listener);
    return () => this.retryListeners.delete(listener);
  }

  /** Resolves with a live connection; rejects when closed or when `signal` aborts. */
  waitForConnection(signal?: AbortSignal): Promise<ChannelModel> {
    if (this.closed) return Promise.reject(closedError('RabbitMQ connection'));
    if (this.model) return Promise.resolve(this.model);
    if (signal?.aborted) return Promise.reject(transportError('gave up waiting', signal.reason));
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        this.waiters.delete(onModel);
        stopClosing();
        stopCaller();
      };
      const onModel = (model: ChannelModel) => {
        cleanup();
        resolve(model);
      };
      const giveUp = () => {
        cleanup();
        reject(
          this.closed
            ? closedError('RabbitMQ connection')
            : transportError('gave up waiting', signal?.reason),
        );
      };
      this.waiters.add(onModel);
      // Through onAbort: one listener on the closing signal however many wait (a listener each
      // passed Node's limit at 11 publishes waiting out an outage: review 156).
      const stopClosing = onAbort(this.closing.signal, giveUp);
      const stopCaller = signal ? onAbort(signal, giveUp) : () => undefined;
    });
  }

  close(): Promise<void> {
    if (!this.closePromise) this.closePromise = this.shutdown();
    return this.closePromise;
  }

  private async shutdown(): Promise<void> {
    this.closing.abort(closedError('RabbitMQ connection'));
    const model = this.model;
    this.model = null;
    this.closingModel = model;
    if (model) await closeModel(model, Math.min(CLOSE_ANSWER_MS, this.options.connectTimeoutMs));
    this.closingModel = null;
    await this.loop?.catch(() => undefined);
  }

  /**
   * Ends the connection at once, its close handshake not waited for: its socket is destroyed (the
   * broker requeues what it delivered unacked on it) and no reconnect follows; a connect under
   * way fails. For an owner whose close() ran past its closeTimeoutMs; close() stays safe after it.
   * Resolves once amqplib ended each connection (local, at once): it reports the destroyed socket
   * as a connection 'error' (logged) and then 'close', which came after the owner's close() had
   * resolved, as for closeModel (review 131).
   */
  async destroy(): Promise<void> {
    this.closing.abort(closedError('RabbitMQ connection'));
    const models = [this.model, this.closingModel].filter((model) => model !== null);
    this.model = null;
    await Promise.all(
      models.map((model) =>
        destroyedWithin(model, new Error('the connection was destroyed (closeTimeoutMs)'), CLOSE_ANSWER_MS),
      ),
    );
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      let model: ChannelModel;
      try {
        model = await this.open();
      } catch (error) {
        // Ended by close() (open()): no failure to report, nothing to retry.
        if (this.closed) return;
        failures += 1;
        const delay = backoffDelay(failures, this.options.reconnectBackoff, this.options.random);
        this.options.logger.warn({ err: error, delay }, 'ferry.rabbitmq: connect failed; retrying');
        for (const listener of [...this.retryListeners]) listener(error, delay);
        try {
          await abortableDelay(delay, this.closing.signal);
        } catch {
          return;
        }
        continue;
      }
      if (this.closed) {
        // Opened as close() ran: closed within the same bound as close()'s own, and listened to,
        // since a connection failing during that close emits 'error' (an uncaught exception with
        // no listener) (review30-silent-broker.test.ts).
        model.on('error', (error: unknown) => {
          this.options.logger.warn({ err: error }, 'ferry.rabbitmq: connection error while closing');
        });
        await closeModel(model, Math.min(CLOSE_ANSWER_MS, this.options.connectTimeoutMs));
        return;
      }
      failures = 0;
      // Lost, or closed by close(): a connection whose close the broker never answers (a resource
      // alarm) has its socket destroyed without amqplib's 'close'; the loop ends all the same.
      const lost = new Promise<void>((resolve) => {
        const unlisten = onAbort(this.closing.signal, resolve);
        model.once('close', () => {
          unlisten();
          resolve();
        });
      });
      model.on('error', (error: unknown) => {
        this.options.logger.warn({ err: error }, 'ferry.rabbitmq: connection error');
      });
      model.on('blocked', (reason: unknown) => {
        if (this.model !== model) return;
        this.blockedReason = typeof reason === 'string' && reason.length > 0 ? reason : 'no reason given';
        this.options.logger.warn(
          { reason: this.blockedReason },
          'ferry.rabbitmq: the broker blocked the connection (resource alarm); publishes wait until it clears',
        );
      });
      model.on('unblocked', () => {
        if (this.model === model) this.blockedReason = null;
      });
      this.blockedReason = null;
      this.model = model;
      for (const waiter of [...this.waiters]) waiter(model);
      for (const setup of [...this.setups]) void this.runSetup(setup, model);
      await lost;
      if (this.model === model) {
        this.model = null;
        this.blockedReason = null;
      }
      if (!this.closed) this.options.logger.warn('ferry.rabbitmq: connection lost; reconnecting');
    }
  }

  private async open(): Promise<ChannelModel> {
    const url = new URL(this.options.url);
    url.searchParams.set('heartbeat', String(this.options.heartbeatSeconds));
    if (this.closed) throw closedError('RabbitMQ connection');
    // close() ends an attempt under way at once: its socket (TCP or TLS; `signal` is passed on to
    // net.connect / tls.connect) is destroyed, which fails the attempt. Left to end on its own, a
    // peer that accepts and never answers the handshake held close() (and every owner's close())
    // for the whole connectTimeoutMs, the socket keeping the process running (review 97). Only
    // while it is under way: an open connection is closed by close() with its close handshake
    // (closeModel), never by destroying its socket.
    const attempt = new AbortController();
    const stop = onAbort(this.closing.signal, () => attempt.abort(closedError('RabbitMQ connection')));
    try {
      // `timeout` bounds the TCP connect and the AMQP handshake (amqplib clears it once open).
      // `noDelay`: Nagle's algorithm off (amqplib leaves it on). Frames are small and often written
      // back to back (acks, cancel, publishes); with Nagle on, one written while the previous is
      // unacknowledged waits for the broker's delayed ACK, up to 40 ms.
      return await amqp.connect(url.toString(), {
        clientProperties: { connection_name: this.options.connectionName },
        timeout: this.options.connectTimeoutMs,
        noDelay: true,
        signal: attempt.signal,
      });
    } catch (error) {
      throw openRefused(error, url);
    } finally {
      stop();
    }
  }

  private async runSetup(setup: ConnectionSetup, model: ChannelModel): Promise<void> {
    try {
      await setup(model);
    } catch (error) {
      this.options.logger.warn(
        { err: error },
        `ferry.rabbitmq: channel setup failed (${describeError(error)}); it runs again after the next reconnect`,
      );
    }
  }
}

/**
 * amqplib's error when the broker closes the connection in answer to connection.open: it drops the
 * broker's reply code and text there, so ferry cannot tell the causes apart. RabbitMQ does this
 * when the virtual host does not exist, is down (while the broker restarts), has reached its
 * connection limit, or the user may not use it. Some of these pass on their own, so the connection
 * keeps trying; the error names the virtual host and the causes instead of amqplib's frame name.
 */
function openRefused(error: unknown, url: URL): unknown {
  const message = error instanceof Error ? error.message : '';
  if (!message.startsWith('Expected ConnectionOpenOk; got <ConnectionClose')) return error;
  return new Error(
    `the broker closed the connection when asked to open ${vhostNamed(url)} (amqplib does not pass ` +
      'on its reason: the virtual host does not exist, is down while the broker restarts, has reached its ' +
      'connection limit, or the user may not use it)',
    { cause: error },
  );
}

/**
 * The virtual host of `url` as amqplib asks for it (its path, unescaped as amqplib does), for an
 * error text: control characters escaped (no log line is forged), and not shown when it holds an
 * '@': a password with an unencoded '/' leaves its tail and the host in the path.
 */
function vhostNamed(url: URL): string {
  const name = url.pathname.length > 1 ? unescape(url.pathname.slice(1)) : '/';
  if (name.includes('@')) {
    return "the virtual host in the URL's path (not shown: it holds an '@', as a password with an unencoded '/' leaves it)";
  }
  return `virtual host '${JSON.stringify(name).slice(1, -1)}'`;
}

/**
 * A publisher's or consumer's `connection` of none of the kinds it takes (a RabbitConnection,
 * connection options, an amqp:// URL): FerryConfigError naming `connection`, the value shown.
 */
export function refuseConnection(given: unknown): never {
  throw new FerryConfigError(
    'connection',
    `must be a RabbitConnection, connection options or an amqp:// URL, got ${received(given)}`,
  );
}

/** Accepts either a shared connection or a URL; a connection made from a URL is owned (closed with its user). */
export function useConnection(
  given: RabbitConnection | ConnectionOptions | string,
  logger?: Logger,
): {
  connection: RabbitConnection;
  owned: boolean;
} {
  if (given instanceof RabbitConnection) return { connection: given, owned: false };
  const kind = typeof given;
  if (kind !== 'string' && (kind !== 'object' || given === null || Array.isArray(given))) {
    refuseConnection(given);
  }
  const options = typeof given === 'string' ? { url: given } : given;
  // A connection the component owns logs where the component does (its connect failures and
  // losses), unless its own options name a logger. The options are not copied: a getter on a
  // class, a non-enumerable property read as given.
  return { connection: new RabbitConnection(options, { logger }), owned: true };
}

/**
 * Opens a confirm channel on `model`. amqplib's "No channels left to allocate" (every channel
 * number up to the negotiated channelMax in use) becomes ChannelsExhaustedError, which names
 * channelMax and what holds the channels.
 */
export async function openConfirmChannel(model: ChannelModel): Promise<ConfirmChannel> {
  try {
    return await model.createConfirmChannel();
  } catch (error) {
    if (!(error instanceof Error) || error.message !== 'No channels left to allocate') throw error;
    const tuned = (model as unknown as { connection?: { channelMax?: unknown } }).connection?.channelMax;
    throw new ChannelsExhaustedError(typeof tuned === 'number' ? tuned : null, { cause: error });
  }
}

/**
 * Closes `model`, waiting at most `ms` (CLOSE_ANSWER_MS) for the broker's close-ok; past that its
 * socket is destroyed. A node under a resource alarm reads no connection that published, so it
 * answers the close only once the alarm clears: close(), and an application's shutdown, waited
 * for that (`test/review14-alarm.test.ts`).
 */
async function closeModel(model: ChannelModel, ms: number): Promise<void> {
  if (await settlesWithin(model.close(), ms)) return;
  await destroyedWithin(
    model,
    new Error(`the broker did not answer the connection's close within ${ms} ms`),
    ms,
  );
}

/**
 * Destroys `model`'s socket (destroySocket) and waits, at most `ms`, for its end (local, at once),
 * and for what amqplib scheduled as it ended:
 * amqplib reports the destroyed socket as a connection 'error' (logged) and then 'close'; both
 * came after the close() of the connection, and of its owner, had resolved (review 131: a warning
 * logged after a consumer's close()).
 */
async function destroyedWithin(model: ChannelModel, error: Error, ms: number): Promise<void> {
  const closed = new Promise<void>((resolve) => model.once('close', () => resolve()));
  destroySocket(model, error);
  await settlesWithin(closed, ms);
  await amqplibTurn();
}

/**
 * Resolves once what amqplib queued for the next turn of the event loop ran: closing a channel
 * (or a connection's channels) it queues a read of its multiplexer (setImmediate, from a stream's
 * 'readable' on the next tick), which ran after the owner's close() had resolved. Queued from a
 * later tick, this turn comes after that read.
 */
export function amqplibTurn(): Promise<void> {
  return new Promise((resolve) => process.nextTick(() => setImmediate(resolve)));
}

/**
 * Destroys `model`'s socket with `error`, so that amqplib ends the connection as for a failed
 * socket (its heartbeat timers stop and it emits 'close'); without one it waits for the close-ok
 * for ever.
 */
function destroySocket(model: ChannelModel, error: Error): void {
  const socket = (model as unknown as { connection?: { stream?: { destroy?: (error: Error) => void } } })
    .connection?.stream;
  socket?.destroy?.(error);
}
