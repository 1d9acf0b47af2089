import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  KafkaJSConnectionError,
  type ISocketFactory,
  type ISocketFactoryArgs,
  type KafkaConfig,
  type LogEntry,
  type logLevel,
  type RetryOptions,
} from 'kafkajs';
import { MIN_MAX_WAIT_TIME_MS } from '../connectionOptions';
import type { SeedRotation } from './seedRotation';

/** kafkajs's own keep-alive on broker sockets (its default socket factory's). */
const KEEP_ALIVE_MS = 60_000;

/**
 * Broker sockets as kafkajs opens them when the application passes no socketFactory, with
 * Nagle's algorithm off, as @platformatic/kafka has it (kafkajs leaves it on): a request written
 * while an earlier one is unacknowledged (an offset commit behind a long-poll fetch) would wait
 * for the broker's delayed ACK, up to 40 ms. An application's own socketFactory is used as given.
 */
const plainSocketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : tcpConnect({ host, port }, onConnect);
  socket.setKeepAlive(true, KEEP_ALIVE_MS);
  socket.setNoDelay(true);
  return socket;
};

/** kafkajs's retry settings where an application sets none (its own defaults, chosen as it does). */
function kafkajsRetryDefaults(): Required<
  Pick<RetryOptions, 'maxRetryTime' | 'initialRetryTime' | 'factor' | 'retries'>
> {
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    return process.env.NODE_ENV === 'test'
      ? (require('kafkajs/src/retry/defaults.test') as Required<RetryOptions>)
      : (require('kafkajs/src/retry/defaults') as Required<RetryOptions>);
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch {
    // A kafkajs laid out otherwise than the 2.2.4 ferry depends on: its documented defaults.
    return { maxRetryTime: 30_000, initialRetryTime: 300, factor: 0.2, retries: 5 };
  }
}

/**
 * `retry` with no wait between kafkajs's retries longer than `ceilingMs` (clientRetryCeilingMs):
 * the first wait is `initialRetryTime` randomized by `factor` (kafkajs does not cap it at
 * `maxRetryTime`), each later one at most `maxRetryTime`. Shorter timings are kept as they are.
 *
 * With `ended`, no retry once it is true: each of kafkajs's retriers (one a call, made from
 * these options) compares its count with `retries` before each attempt, so from then on an
 * attempt that fails ends its retrier with no wait, in a KafkaJSNumberOfRetriesExceeded, which
 * kafkajs does not retry either: a retrier around it (a send around its broker pool's connect)
 * fails at once too instead of waiting once more (review 150: such a nested wait, set off only
 * after close() destroyed the sockets, fired after close() resolved). `retries` is read, never
 * copied as a number (kafkajs copies the options before it reads them), so it is a count read
 * anew at each comparison.
 */
export function retryWithin(
  retry: RetryOptions | undefined,
  ceilingMs: number,
  ended?: () => boolean,
): RetryOptions {
  const timings = { ...kafkajsRetryDefaults(), ...retry };
  return {
    ...retry,
    maxRetryTime: Math.min(timings.maxRetryTime, ceilingMs),
    initialRetryTime: Math.min(timings.initialRetryTime, Math.floor((ceilingMs - 1) / (1 + timings.factor))),
    ...(ended === undefined ? {} : { retries: retriesUntil(timings.retries, ended) }),
  };
}

/** `retries` until `ended()`, none from then on: a count kafkajs reads (`retryCount < retries`) each time. */
function retriesUntil(retries: number, ended: () => boolean): number {
  return { valueOf: () => (ended() ? 0 : retries) } as unknown as number;
}

/**
 * A consumer's fetch long-poll (`maxWaitTimeMs`) with no more than twice `ceilingMs`
 * (clientRetryCeilingMs: half of closeTimeoutMs), never below MIN_MAX_WAIT_TIME_MS. kafkajs sleeps
 * that long between the fetches of a member with no partition to fetch (more members than
 * partitions), on a timer nothing cancels: close() waits for it, and one longer than the bound
 * fired after close() resolved, holding the process (review 150). Shorter settings are kept.
 */
export function longPollWithin(maxWaitTimeMs: number, ceilingMs = Infinity): number {
  return Math.min(maxWaitTimeMs, Math.max(MIN_MAX_WAIT_TIME_MS, 2 * ceilingMs));
}

/**
 * How one kafkajs producer or consumer reaches its brokers, held by ferry so that connect
 * retries are ferry's (its reconnect backoff, cancelled by close()) and close() leaves nothing
 * of the client running:
 *
 * - during `connecting()`, a failed connect is not retried by kafkajs: after the first failure
 *   kafkajs asks for a new seed broker and gets none, which it gives up on at once (a
 *   non-retriable error) instead of waiting on its own retry timers;
 * - when `signal` aborts (the owner is closing) during a connect, the connect's sockets are
 *   destroyed and no new one is opened, so it fails now and nothing of it retries. Sockets of a
 *   running client are left alone (a closing consumer still commits and leaves its group over
 *   them; its owner disconnects it).
 *
 * `release()`, once the client disconnected, closes what is left of its sockets.
 *
 * Outside `connecting()` kafkajs keeps its own retries, so a running client rides out a broker
 * restart as before. Seed brokers are handed out one at a time: the one that answered last (SeedRotation).
 *
 * A producer's gate (`closing: 'refuses'`) opens no connection at all once the signal aborted:
 * kafkajs retries a send on its own timers, which nothing can cancel, and a retry of a send to a
 * broker gone down reconnected after the owner's close() resolved, its timer holding the process
 * (review 145). Refused, the send's next attempt ends its retries (kafkajs gives up on a client
 * that gets no seed broker), and the owner's close() waits for that within its closeTimeoutMs.
 * A consumer's gate lets a closing consumer connect to commit and leave its group, and so does
 * its dead-letter producer's (`connects`): the chunk in flight finishes, its dead letters too
 * (review 147: refused, a reset idle connection left the chunk uncommitted at close()).
 * Once released, the client's log lines are dropped. No wait between the client's retries is
 * longer than `retryCeilingMs` (retryWithin): kafkajs's retry timers can be neither cancelled
 * nor seen, and the owner's close() waits out the one pending within closeTimeoutMs, so none fires
 * after it (review 145: one that outlasted closeTimeoutMs fired after close() resolved).
 * Once released, no retry of the client waits again: an attempt that fails ends its retrier, and
 * the retrier around it, at once (retryWithin's `ended`); once destroyed (the owner's close() past
 * its bound), a consumer's batch ends as a failure kafkajs does not retry. Only a retry wait set
 * before the destroy is left, which the owner's close() waits out (boundedClose); retries nested
 * in retries set off one wait after another past it (review 150).
 */
export class KafkajsGate {
  private attempt: ConnectAttempt | null = null;
  /** Every socket of the client not closed yet. */
  private readonly open = new Set<Socket>();
  /** Set by release(): the client disconnected for good. */
  private released = false;
  /** release()'s error: the client destroyed (its owner's close() past its bound). */
  private destroyedBy: Error | null = null;
  /** The seed broker handed out last. */
  private seed: string | null = null;

  constructor(
    private readonly seeds: SeedRotation,
    private readonly signal: AbortSignal,
    private readonly factory: ISocketFactory = plainSocketFactory,
    /** `refuses`: no connection once the signal aborted (a producer's); `connects`: outside a connect, connections go on. */
    private readonly closing: 'refuses' | 'connects',
    /** The longest wait between the client's retries (clientRetryCeilingMs of the owner's closeTimeoutMs). */
    private readonly retryCeilingMs: number,
  ) {}

  /**
   * `retry` (a producer's or consumer's own) with no wait longer than the gate's ceiling, and no
   * retry at all once the gate released the client (retryWithin's `ended`).
   */
  retry(retry: RetryOptions): RetryOptions {
    // Without a count of its own, kafkajs gives the client the config's (config()), ending likewise.
    const ended = retry.retries === undefined ? undefined : () => this.released;
    return retryWithin(retry, this.retryCeilingMs, ended);
  }

  /** True once release() destroyed the client (its owner's close() past its bound). */
  get destroyed(): boolean {
    return this.destroyedBy !== null;
  }

  /**
   * Throws, once the client is destroyed, release()'s error as a failure kafkajs's retriers do not
   * retry (`retriable: false`): for ferry's code called by the client (a consumer's batch handler).
   */
  throwIfDestroyed(): void {
    const reason = this.destroyedBy;
    if (reason === null) return;
    throw Object.assign(new Error(reason.message, { cause: reason }), { retriable: false });
  }

  /** `count` retries of a call of the client, none once the gate released it (retryWithin's `ended`). */
  retries(count: number): number {
    return retriesUntil(count, () => this.released);
  }

  /** `config` with its brokers, sockets and log lines going through this gate. */
  config(config: KafkaConfig): KafkaConfig {
    const logCreator = config.logCreator;
    return {
      ...config,
      retry: retryWithin(config.retry, this.retryCeilingMs, () => this.released),
      brokers: () => this.seedBrokers(),
      socketFactory: (args: ISocketFactoryArgs) => this.openSocket(args),
      ...(logCreator === undefined
        ? {}
        : {
            logCreator: (level: logLevel) => {
              const log = logCreator(level);
              return (entry: LogEntry) => {
                if (!this.released) log(entry);
              };
            },
          }),
    };
  }

  /**
   * Runs a connect of the client: no kafkajs retries of it, failed at once when the signal
   * aborts. A connect kafkajs gave up on for want of a seed broker rejects with the connection
   * failure it had (a KafkaJSConnectionError, as kafkajs's own retries would end in).
   */
  async connecting<T>(connect: () => Promise<T>): Promise<T> {
    const attempt: ConnectAttempt = {
      builds: 0,
      sockets: new Set<Socket>(),
      broker: null,
      failure: null,
      connected: false,
    };
    // With an error: kafkajs fails a connection's requests on 'error', not on 'close'.
    const abort = () => {
      for (const socket of attempt.sockets) socket.destroy(new Error('the client is closing'));
    };
    this.attempt = attempt;
    this.signal.addEventListener('abort', abort, { once: true });
    try {
      if (this.signal.aborted) throw this.signal.reason;
      return await connect();
    } catch (error) {
      if (attempt.builds < 2) throw error;
      throw new KafkaJSConnectionError(`Connection error: ${this.failureOf(attempt)}`, {
        broker: attempt.broker ?? '',
      });
    } finally {
      this.signal.removeEventListener('abort', abort);
      if (this.attempt === attempt) this.attempt = null;
    }
  }

  /**
   * After the client disconnected: closes the sockets it only ended (kafkajs ends a socket and
   * leaves it to the broker to close it, then logs that it disconnected) and resolves once all
   * are closed; no connection opens after it. Nothing of the client outlives its owner's close().
   * With `error` (a client ended before its disconnect finished) the sockets are destroyed with
   * it: kafkajs fails a connection's requests in flight on 'error', not on 'close'.
   */
  async release(error?: Error): Promise<void> {
    this.released = true;
    this.destroyedBy ??= error ?? null;
    const closing = [...this.open].map(
      (socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())),
    );
    for (const socket of this.open) socket.destroy(error);
    await Promise.all(closing);
  }

  /** Disconnects `client`, the gate's, then closes what is left of its sockets (release()). */
  async disconnect(client: { disconnect(): Promise<void> }): Promise<void> {
    try {
      await client.disconnect();
    } finally {
      await this.release();
    }
  }

  private seedBrokers(): string[] {
    const attempt = this.attempt;
    if (attempt) attempt.builds += 1;
    if (this.refusing()) return [];
    // kafkajs asks for another seed only when a connect to its seed failed.
    if (this.seed !== null) this.seeds.failed(this.seed);
    // ... which, during connecting(), is the end of the connect: no second seed.
    if (attempt !== null && attempt.builds > 1) return [];
    const broker = this.seeds.current();
    this.seed = broker;
    if (attempt) attempt.broker = broker;
    return [broker];
  }

  /**
   * No new connection: after release(), and once the owner is closing for a connect in flight, or
   * for any connection of a gate whose closing `refuses`.
   */
  private refusing(): boolean {
    if (this.released) return true;
    return this.signal.aborted && (this.attempt !== null || this.closing === 'refuses');
  }

  /** Why a connect kafkajs gave up on failed, as far as its sockets tell. */
  private failureOf(attempt: ConnectAttempt): string {
    if (this.signal.aborted) return 'the client is closing';
    if (attempt.failure) return attempt.failure.message;
    // kafkajs does not pass on the error of a request on a connected socket (e.g. a SASL handshake
    // the listener refuses) when it asks for another seed; its log at level 'error' names it.
    if (attempt.connected) return 'the broker failed the first requests (TLS or SASL settings?)';
    return 'no answer';
  }

  private openSocket(args: ISocketFactoryArgs): Socket {
    if (this.refusing()) throw new Error('the client is closing');
    const attempt = this.attempt;
    const onConnect = () => {
      if (attempt) attempt.connected = true;
      args.onConnect();
    };
    const socket = this.factory({ ...args, onConnect });
    this.open.add(socket);
    socket.once('close', () => this.open.delete(socket));
    if (attempt) {
      attempt.sockets.add(socket);
      socket.once('error', (error: Error) => (attempt.failure ??= error));
      socket.once('close', () => attempt.sockets.delete(socket));
    }
    return socket;
  }
}

interface ConnectAttempt {
  /** Seed brokers kafkajs asked for during this connect. */
  builds: number;
  readonly sockets: Set<Socket>;
  /** The seed broker handed out last. */
  broker: string | null;
  /** The first socket error of this connect. */
  failure: Error | null;
  /** A socket of this connect connected (and its TLS handshake completed). */
  connected: boolean;
}
