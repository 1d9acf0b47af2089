import { FerryConfigError, defaultLogger, type Logger } from '@ferry/core';
import type { BackoffPolicy } from './backoff';

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

export function resolveBackoff(
  name: string,
  given: Partial<BackoffPolicy> | undefined,
  defaults: BackoffPolicy,
): BackoffPolicy {
  const policy = { ...defaults, ...given };
  integer(`${name}.initialMs`, policy.initialMs, 1);
  integer(`${name}.maxMs`, policy.maxMs, policy.initialMs);
  if (!Number.isFinite(policy.multiplier) || policy.multiplier < 1) {
    throw new FerryConfigError(`${name}.multiplier`, 'must be a finite number >= 1');
  }
  if (policy.jitter !== 'none' && policy.jitter !== 'full') {
    throw new FerryConfigError(`${name}.jitter`, "must be 'none' or 'full'");
  }
  return policy;
}

export function integer(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new FerryConfigError(name, `must be an integer between ${min} and ${max}`);
  }
  return value;
}

export function nonEmpty(name: string, value: string | undefined): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new FerryConfigError(name, 'must be a non-empty string');
  }
  return value;
}
