import { FerryConfigError } from '../errors';

/** The largest delay a timer (and ferry) accepts: 2^31 - 1 ms. */
export const MAX_DELAY_BOUND_MS = 2_147_483_647;

export type BackoffStrategy = 'fixed' | 'exponential';
export type FailedHeadPolicy = 'block' | 'skip';

export interface OutboxOptions {
  retry?: { maxRetries?: number; backoff?: BackoffStrategy; initialDelay?: number; maxDelay?: number };
  lease?: { duration?: number; heartbeatInterval?: number; heartbeatFailureTolerance?: number };
  /** @deprecated alias for lease.duration; logs a warning. */
  stuckThreshold?: number;
  pollInterval?: number;
  batchSize?: number;
  /** Rows requeued per recovery statement (recovery runs every tenth poll cycle). */
  recoveryBatchSize?: number;
  poisonGuard?: { maxClaims?: number };
  ordering?: { failedHead?: FailedHeadPolicy };
  shutdownTimeout?: number;
  /** Back-off after a failed poll cycle (database down), doubled up to 30 s. */
  errorBackoff?: number;
  /** LISTEN/NOTIFY channel for wake-ups. */
  channel?: string;
  listen?: { reconnectInitialDelay?: number; reconnectMaxDelay?: number };
}

export interface ResolvedOutboxOptions {
  readonly retry: {
    readonly maxRetries: number;
    readonly backoff: BackoffStrategy;
    readonly initialDelay: number;
    readonly maxDelay: number;
  };
  readonly lease: {
    readonly duration: number;
    readonly heartbeatInterval: number;
    readonly heartbeatFailureTolerance: number;
  };
  readonly pollInterval: number;
  readonly batchSize: number;
  readonly recoveryBatchSize: number;
  readonly poisonGuard: { readonly maxClaims: number };
  readonly ordering: { readonly failedHead: FailedHeadPolicy };
  readonly shutdownTimeout: number;
  readonly errorBackoff: number;
  readonly channel: string;
  readonly listen: { readonly reconnectInitialDelay: number; readonly reconnectMaxDelay: number };
  /** Warnings produced while resolving (deprecated options); the relay logs them. */
  readonly warnings: readonly string[];
}

interface IntRule {
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

/** Every numeric option: default and inclusive bounds (ms where a duration). The docs quote this table. */
export const OUTBOX_DEFAULTS = {
  'retry.maxRetries': { default: 5, min: 1, max: 1_000 },
  'retry.initialDelay': { default: 1_000, min: 0, max: MAX_DELAY_BOUND_MS },
  'retry.maxDelay': { default: 86_400_000, min: 0, max: MAX_DELAY_BOUND_MS },
  'lease.duration': { default: 300_000, min: 100, max: MAX_DELAY_BOUND_MS },
  'lease.heartbeatInterval': { default: 60_000, min: 10, max: MAX_DELAY_BOUND_MS },
  'lease.heartbeatFailureTolerance': { default: 1, min: 1, max: 100 },
  pollInterval: { default: 1_000, min: 10, max: MAX_DELAY_BOUND_MS },
  batchSize: { default: 100, min: 1, max: 10_000 },
  recoveryBatchSize: { default: 1_000, min: 1, max: 100_000 },
  'poisonGuard.maxClaims': { default: 10, min: 1, max: 1_000_000 },
  shutdownTimeout: { default: 30_000, min: 0, max: MAX_DELAY_BOUND_MS },
  errorBackoff: { default: 1_000, min: 1, max: MAX_DELAY_BOUND_MS },
  'listen.reconnectInitialDelay': { default: 500, min: 1, max: MAX_DELAY_BOUND_MS },
  'listen.reconnectMaxDelay': { default: 30_000, min: 1, max: MAX_DELAY_BOUND_MS },
} as const satisfies Record<string, IntRule>;

export const OUTBOX_DEFAULT_CHANNEL = 'ferry_outbox';
const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

type Key = keyof typeof OUTBOX_DEFAULTS;

function int(key: Key, value: unknown): number {
  const rule: IntRule = OUTBOX_DEFAULTS[key];
  if (value === undefined) return rule.default;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new FerryConfigError(key, `must be an integer, got ${String(value)}`);
  }
  if (value < rule.min || value > rule.max) {
    throw new FerryConfigError(key, `must be between ${rule.min} and ${rule.max}, got ${value}`);
  }
  return value;
}

function oneOf<T extends string>(key: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T)) {
    throw new FerryConfigError(key, `must be one of ${allowed.join(', ')}, got ${String(value)}`);
  }
  return value as T;
}

function resolveLease(options: OutboxOptions, warnings: string[]): ResolvedOutboxOptions['lease'] {
  let durationInput = options.lease?.duration;
  if (options.stuckThreshold !== undefined) {
    warnings.push('stuckThreshold is deprecated; use lease.duration');
    if (durationInput !== undefined && durationInput !== options.stuckThreshold) {
      throw new FerryConfigError('stuckThreshold', 'conflicts with lease.duration; set only lease.duration');
    }
    durationInput = options.stuckThreshold;
  }
  const duration = int('lease.duration', durationInput);
  const heartbeatInterval = int('lease.heartbeatInterval', options.lease?.heartbeatInterval);
  if (heartbeatInterval * 2 >= duration) {
    throw new FerryConfigError(
      'lease.heartbeatInterval',
      `must be less than half of lease.duration (${duration}), got ${heartbeatInterval}`,
    );
  }
  const heartbeatFailureTolerance = int(
    'lease.heartbeatFailureTolerance',
    options.lease?.heartbeatFailureTolerance,
  );
  return { duration, heartbeatInterval, heartbeatFailureTolerance };
}

/** Resolves the retry part alone (emit needs only maxRetries). */
export function resolveRetryOptions(retry: OutboxOptions['retry'] = {}): ResolvedOutboxOptions['retry'] {
  const initialDelay = int('retry.initialDelay', retry.initialDelay);
  const maxDelay = int('retry.maxDelay', retry.maxDelay);
  if (maxDelay < initialDelay) {
    throw new FerryConfigError('retry.maxDelay', `must be at least retry.initialDelay (${initialDelay})`);
  }
  return {
    maxRetries: int('retry.maxRetries', retry.maxRetries),
    backoff: oneOf('retry.backoff', retry.backoff, ['fixed', 'exponential'], 'exponential'),
    initialDelay,
    maxDelay,
  };
}

/**
 * Fills defaults, checks every bound and throws FerryConfigError (FERRY_CONFIG_INVALID)
 * naming the first bad option. Pure: no I/O, no logging.
 */
export function resolveOutboxOptions(options: OutboxOptions = {}): ResolvedOutboxOptions {
  const warnings: string[] = [];
  const channel = options.channel ?? OUTBOX_DEFAULT_CHANNEL;
  if (!CHANNEL_PATTERN.test(channel)) {
    throw new FerryConfigError('channel', 'must match /^[a-z_][a-z0-9_]{0,62}$/');
  }
  const reconnectInitialDelay = int('listen.reconnectInitialDelay', options.listen?.reconnectInitialDelay);
  const reconnectMaxDelay = int('listen.reconnectMaxDelay', options.listen?.reconnectMaxDelay);
  if (reconnectMaxDelay < reconnectInitialDelay) {
    throw new FerryConfigError('listen.reconnectMaxDelay', 'must be at least listen.reconnectInitialDelay');
  }
  return {
    retry: resolveRetryOptions(options.retry),
    lease: resolveLease(options, warnings),
    pollInterval: int('pollInterval', options.pollInterval),
    batchSize: int('batchSize', options.batchSize),
    recoveryBatchSize: int('recoveryBatchSize', options.recoveryBatchSize),
    poisonGuard: { maxClaims: int('poisonGuard.maxClaims', options.poisonGuard?.maxClaims) },
    ordering: {
      failedHead: oneOf('ordering.failedHead', options.ordering?.failedHead, ['block', 'skip'], 'block'),
    },
    shutdownTimeout: int('shutdownTimeout', options.shutdownTimeout),
    errorBackoff: int('errorBackoff', options.errorBackoff),
    channel,
    listen: { reconnectInitialDelay, reconnectMaxDelay },
    warnings,
  };
}
