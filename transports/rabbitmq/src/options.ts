import {
  FerryConfigError,
  defaultLogger,
  integerOption as integer,
  resolveBackoff,
  type BackoffPolicy,
  type Logger,
} from '@ferry/core';

/** Every default in one table; the package README quotes it. */
export const DEFAULTS = {
  connectionName: 'ferry',
  heartbeatSeconds: 10,
  reconnect: { initialMs: 100, maxMs: 10_000, multiplier: 2, jitter: 'full' } satisfies BackoffPolicy,
  prefetch: 50,
  maxTransportRetries: 5,
  retryBackoff: { initialMs: 1_000, maxMs: 60_000, multiplier: 2, jitter: 'none' } satisfies BackoffPolicy,
  contentTypes: ['application/json'] as readonly string[],
  acceptMissingContentType: true,
  declareTopology: true,
  confirmTimeoutMs: 10_000,
} as const;

export interface ConnectionOptions {
  /** amqp:// or amqps:// URL. Required. */
  url: string;
  /** Sent as the `connection_name` client property (shown by `rabbitmqctl list_connections`). */
  connectionName?: string;
  heartbeatSeconds?: number;
  /** Backoff between reconnect attempts. */
  reconnect?: Partial<BackoffPolicy>;
  logger?: Logger;
  /** Random source for reconnect jitter. */
  random?: () => number;
}

export interface ResolvedConnectionOptions {
  readonly url: string;
  readonly connectionName: string;
  readonly heartbeatSeconds: number;
  readonly reconnect: BackoffPolicy;
  readonly logger: Logger;
  readonly random: () => number;
}

export function resolveConnectionOptions(options: ConnectionOptions): ResolvedConnectionOptions {
  if (typeof options.url !== 'string' || !/^amqps?:\/\//.test(options.url)) {
    throw new FerryConfigError('url', 'must be an amqp:// or amqps:// URL');
  }
  const connectionName = options.connectionName ?? DEFAULTS.connectionName;
  if (connectionName.length === 0) throw new FerryConfigError('connectionName', 'must not be empty');
  return {
    url: options.url,
    connectionName,
    heartbeatSeconds: integer('heartbeatSeconds', options.heartbeatSeconds ?? DEFAULTS.heartbeatSeconds, 0),
    reconnect: resolveBackoff('reconnect', options.reconnect, DEFAULTS.reconnect),
    logger: options.logger ?? defaultLogger('ferry.rabbitmq'),
    random: options.random ?? Math.random,
  };
}
