import { FerryConfigError, type Logger } from '@ferry/core';
import {
  functionOption,
  guardLogger,
  defaultLogger,
  integerOption as integer,
  knownKeysOption,
  nonEmptyOption as nonEmpty,
  received,
  requiredOptions,
  resolveBackoff,
  type OptionKeys,
  type BackoffPolicy,
  loggerOption,
  TRANSPORT_RETRIES,
} from '@ferry/core/transport';
import { checkUrlParameters } from './urlParameters';

/** Every default in one table; the package README quotes it. */
export const DEFAULTS = {
  connectionName: 'ferry',
  heartbeatSeconds: 10,
  connectTimeoutMs: 10_000,
  reconnectBackoff: { initialMs: 100, maxMs: 10_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
  /**
   * 250, measured (bench inbox-accept-rabbitmq, 2,000 messages, both sides at the same prefetch):
   * 50 → 0.51-0.54 of a raw consume + ack, 100 → 0.56-0.61, 250 → 0.62. A batch commits while
   * the broker may push only what the window leaves, so the rate follows prefetch / commit time.
   * Memory: up to prefetch deliveries held, each at most the consumer's maxBodyBytes (1 GiB in all
   * at the defaults; 64 MiB with bodies within the inbox's default maxPayloadBytes).
   */
  prefetch: 250,
  /**
   * A consumer's maxBodyBytes: perPayloadByte × its maxPayloadBytes, at least `least` (4 MiB at the
   * inbox's default 256 KiB). The payload limit is measured on the parsed payload; a body may spend
   * up to 6 bytes per payload byte on escapes (MAX_BYTES_PER_PAYLOAD_BYTE), plus any whitespace
   * between tokens, which no bound can allow for in full: 16 leaves 10 bytes of whitespace per
   * payload byte to a body written with every escape, 15 to a plain one (pretty printing takes one
   * to three).
   */
  maxBodyBytes: { perPayloadByte: 16, least: 1_048_576 },
  /** When maxBatchSize is below prefetch; 1 when one batch can take the whole prefetch window. */
  maxBatchesInFlight: 2,
  maxTransportRetries: TRANSPORT_RETRIES.defaultMax,
  retryBackoff: { initialMs: 1_000, maxMs: 60_000, multiplier: 2, jitter: 'none' } satisfies BackoffPolicy,
  contentTypes: ['application/json'] as readonly string[],
  acceptMissingContentType: true,
  declareTopology: true,
  confirmTimeoutMs: 10_000,
  closeTimeoutMs: 10_000,
} as const;

export interface ConnectionOptions {
  /** amqp:// or amqps:// URL. Required. */
  url: string;
  /** Sent as the `connection_name` client property (shown by `rabbitmqctl list_connections`). */
  connectionName?: string;
  /**
   * The AMQP heartbeat asked for, in seconds. Default: the URL's `heartbeat` query parameter, else
   * 10 (both given and different: FERRY_CONFIG_INVALID). 0 takes the broker's (RabbitMQ's default
   * 60): a heartbeat is off only when the broker's is 0 too.
   */
  heartbeatSeconds?: number;
  /**
   * Deadline of one connect attempt, TCP connect and AMQP handshake together (a peer that accepts
   * and never answers: a node still booting, a dropped network); the attempt then fails and the
   * connection retries after its backoff.
   */
  connectTimeoutMs?: number;
  /** Backoff between reconnect attempts (and a consumer's attempts to open its channel). */
  reconnectBackoff?: Partial<BackoffPolicy>;
  logger?: Logger;
  /** Random source for reconnect jitter. */
  random?: () => number;
}

export interface ResolvedConnectionOptions {
  readonly url: string;
  readonly connectionName: string;
  readonly heartbeatSeconds: number;
  readonly connectTimeoutMs: number;
  readonly reconnectBackoff: BackoffPolicy;
  readonly logger: Logger;
  readonly random: () => number;
}

/** Every connection option key; unknown keys are rejected (FERRY_CONFIG_INVALID). The consumer's
 * and the publisher's tables sit beside their options types. */
export const CONNECTION_OPTION_KEYS = {
  url: true,
  connectionName: true,
  heartbeatSeconds: true,
  connectTimeoutMs: true,
  reconnectBackoff: true,
  logger: true,
  random: true,
} as const satisfies OptionKeys<ConnectionOptions>;

/**
 * Checks a connection's options and fills the defaults; throws FerryConfigError naming the option
 * under `prefix` (`connection.` for a consumer's own connection).
 */
export function resolveConnectionOptions(
  options: ConnectionOptions,
  prefix = '',
  fallbackLogger?: Logger,
): ResolvedConnectionOptions {
  // A consumer's own connection options (`connection.`) were checked to be an object already.
  if (prefix === '') requiredOptions(options, 'url');
  options = knownKeysOption(prefix, options, CONNECTION_OPTION_KEYS);
  if (typeof options.url !== 'string' || !/^amqps?:\/\//.test(options.url)) {
    // received() takes a URL's credentials out.
    throw new FerryConfigError(
      `${prefix}url`,
      `must be an amqp:// or amqps:// URL, got ${received(options.url)}`,
    );
  }
  // Checked here, once: the connection loop would otherwise meet the parser's error on every
  // attempt, and that error carries the whole URL, password included.
  if (!URL.canParse(options.url)) {
    throw new FerryConfigError(
      `${prefix}url`,
      'must be an amqp:// or amqps:// URL that parses (it does not)',
    );
  }
  const urlHeartbeat = checkUrlParameters(`${prefix}url`, new URL(options.url));
  const heartbeatSeconds = integer(
    `${prefix}heartbeatSeconds`,
    options.heartbeatSeconds ?? urlHeartbeat ?? DEFAULTS.heartbeatSeconds,
    0,
  );
  if (urlHeartbeat !== null && heartbeatSeconds !== urlHeartbeat) {
    throw new FerryConfigError(
      `${prefix}heartbeatSeconds`,
      `is ${heartbeatSeconds} but the url's query says heartbeat=${urlHeartbeat}: give one of them`,
    );
  }
  return {
    url: options.url,
    connectionName: nonEmpty(`${prefix}connectionName`, options.connectionName ?? DEFAULTS.connectionName),
    heartbeatSeconds,
    connectTimeoutMs: integer(
      `${prefix}connectTimeoutMs`,
      options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      1,
      2_147_483_647,
    ),
    reconnectBackoff: resolveBackoff(
      `${prefix}reconnectBackoff`,
      options.reconnectBackoff,
      DEFAULTS.reconnectBackoff,
    ),
    logger: guardLogger(
      loggerOption(`${prefix}logger`, options.logger) ?? fallbackLogger ?? defaultLogger('ferry.rabbitmq'),
    ),
    random: functionOption(`${prefix}random`, options.random) ?? Math.random,
  };
}

/**
 * An option amqplib writes as an AMQP short string (an exchange, a queue, a routing key, the
 * appId), or a name made from it: at most 255 UTF-8 bytes. A longer one was taken, and every
 * publish or attach it went into failed. `subject` says what was measured (default: the option).
 */
export function shortStringOption(option: string, value: string, subject = 'is'): void {
  const bytes = Buffer.byteLength(value);
  if (bytes > 255) {
    throw new FerryConfigError(option, `${subject} ${bytes} bytes; an AMQP short string holds at most 255`);
  }
}
