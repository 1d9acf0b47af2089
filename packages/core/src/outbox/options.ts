import { FerryConfigError } from '../errors';
import type { CircuitOptions } from './circuit';
import { leaseHeartbeatInterval } from '../lease';
import {
  integerOption,
  MAX_TIMER_MS,
  knownKeysOption,
  oneOfOption,
  received,
  type OptionKeys,
} from '../optionChecks';
import { ceilingOption } from '../optionRelations';
import { redactOption, type RedactionOptions, type Redactor } from '../redact/redact';
import { STATEMENT_TIMEOUT_BOUNDS, STATEMENT_TIMEOUT_DEFAULT_MS } from '../sql/statementDeadline';

/** The largest delay a timer (and ferry) accepts: 2^31 - 1 ms. */
export const MAX_DELAY_BOUND_MS = MAX_TIMER_MS;

export type BackoffStrategy = 'fixed' | 'exponential';
export type FailedHeadPolicy = 'block' | 'skip';
/** What a completion does with a sent event: keep it as SENT (default) or delete it. */
export type OnSent = 'keep' | 'delete';

export interface OutboxOptions {
  retry?: { maxRetries?: number; backoff?: BackoffStrategy; initialDelay?: number; maxDelay?: number };
  lease?: { duration?: number; heartbeatInterval?: number; heartbeatFailureTolerance?: number };
  /** @deprecated alias for lease.duration; logs a warning. */
  stuckThreshold?: number;
  pollInterval?: number;
  batchSize?: number;
  /**
   * Payload bytes one claim takes at most (the payloads' jsonb text as the claim returns it, which
   * emit measures and stores by migration 0012; a row counts at least its stored, possibly
   * compressed, size, and an event stored before 0012 that alone), beside
   * batchSize's count: rows in due order while their total fits, always at least one (an event
   * larger than this is relayed alone). The relay holds up to pipelineDepth claims at once.
   */
  maxBatchBytes?: number;
  /** Claimed batches the running relay keeps in flight at once (claim, publish, complete overlap). */
  pipelineDepth?: number;
  /** 'delete': a sent event's row is deleted at completion instead of kept as SENT (see docs/outbox.md). */
  onSent?: OnSent;
  /** Rows requeued per recovery statement (recovery runs every tenth poll cycle). */
  recoveryBatchSize?: number;
  poisonGuard?: { maxClaims?: number };
  ordering?: { failedHead?: FailedHeadPolicy };
  shutdownTimeout?: number;
  /**
   * The relay's own deadline for a publish (ms): past it, the batch is retryable (an attempt spent)
   * and whatever the publisher answers later discarded. Unset (the default), a publish holds its
   * claim, renewed by heartbeats, for as long as it takes (the specification: a hung callback with
   * healthy heartbeats is not automatically timed out), unless the publisher declares its own
   * longest answer (Publisher.answerWithinMs), which ferry's publishers do: the relay then waits
   * that and a margin. When both are known, the longer. close() ends the wait in any case.
   */
  publishTimeout?: number;
  /**
   * How long the relay waits for the answer to each of its statements (claim, completion, lease
   * renewal, recovery, release): past it the statement fails with a retriable FERRY_TIMEOUT and the
   * cycle backs off, whatever the driver's timeouts. Rows a claim given up on leases late are
   * handed back on the next cycle, counting nothing (README, "When PostgreSQL goes silent").
   * Default 30,000 ms.
   */
  statementTimeout?: number;
  /** Back-off after a failed poll cycle (database down), doubled up to 30 s. */
  errorBackoff?: number;
  /** LISTEN/NOTIFY channel for wake-ups. */
  channel?: string;
  listen?: {
    reconnectInitialDelay?: number;
    reconnectMaxDelay?: number;
    keepaliveInterval?: number;
    keepaliveTimeout?: number;
  };
  /** Broker-outage circuit breaker (see docs/outbox.md). */
  circuit?: { failureThreshold?: number; openMs?: number; maxOpenMs?: number; probeBatchSize?: number };
  /**
   * Allow-list and extra keys for the redaction of the publisher's error texts before they are
   * stored (last_error), observed and logged: the inbox's option, same shape and defaults.
   */
  redact?: RedactionOptions;
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
  readonly maxBatchBytes: number;
  readonly pipelineDepth: number;
  readonly onSent: OnSent;
  readonly recoveryBatchSize: number;
  readonly poisonGuard: { readonly maxClaims: number };
  readonly ordering: { readonly failedHead: FailedHeadPolicy };
  readonly shutdownTimeout: number;
  /** null: no deadline of the relay's own for a publish (OutboxOptions.publishTimeout). */
  readonly publishTimeout: number | null;
  readonly statementTimeout: number;
  readonly errorBackoff: number;
  readonly channel: string;
  readonly listen: {
    readonly reconnectInitialDelay: number;
    readonly reconnectMaxDelay: number;
    readonly keepaliveInterval: number;
    readonly keepaliveTimeout: number;
  };
  readonly circuit: CircuitOptions;
  /** Applied to every error text the relay stores, observes or logs. */
  readonly redact: Redactor;
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
  batchSize: { default: 500, min: 1, max: 10_000 }, // bench/README.md: relay-kafka at 100 vs 500
  // 64 MiB binds only claims averaging over 128 KiB a row at the default batchSize, and keeps two
  // claims in flight (pipelineDepth) of a 16 MiB-event backlog well inside a default Node heap
  // where 500 such rows (8 GiB) ended the relay (docs/outbox.md).
  maxBatchBytes: { default: 64 * 1024 * 1024, min: 1, max: Number.MAX_SAFE_INTEGER },
  pipelineDepth: { default: 2, min: 1, max: 8 },
  recoveryBatchSize: { default: 1_000, min: 1, max: 100_000 },
  'poisonGuard.maxClaims': { default: 10, min: 1, max: 1_000_000 },
  shutdownTimeout: { default: 30_000, min: 0, max: MAX_DELAY_BOUND_MS },
  statementTimeout: {
    default: STATEMENT_TIMEOUT_DEFAULT_MS,
    min: STATEMENT_TIMEOUT_BOUNDS[0],
    max: STATEMENT_TIMEOUT_BOUNDS[1],
  },
  errorBackoff: { default: 1_000, min: 1, max: MAX_DELAY_BOUND_MS },
  'listen.reconnectInitialDelay': { default: 500, min: 1, max: MAX_DELAY_BOUND_MS },
  'listen.reconnectMaxDelay': { default: 30_000, min: 1, max: MAX_DELAY_BOUND_MS },
  'listen.keepaliveInterval': { default: 30_000, min: 10, max: MAX_DELAY_BOUND_MS },
  'listen.keepaliveTimeout': { default: 10_000, min: 10, max: MAX_DELAY_BOUND_MS },
  'circuit.failureThreshold': { default: 1, min: 1, max: 1_000 },
  'circuit.openMs': { default: 1_000, min: 1, max: MAX_DELAY_BOUND_MS },
  'circuit.maxOpenMs': { default: 30_000, min: 1, max: MAX_DELAY_BOUND_MS },
  'circuit.probeBatchSize': { default: 1, min: 1, max: 10_000 },
} as const satisfies Record<string, IntRule>;

export const OUTBOX_DEFAULT_CHANNEL = 'ferry_outbox';
const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

type Key = keyof typeof OUTBOX_DEFAULTS;

function int(key: Key, value: unknown): number {
  const rule: IntRule = OUTBOX_DEFAULTS[key];
  return value === undefined ? rule.default : integerOption(key, value, rule.min, rule.max);
}

function oneOf<T extends string>(key: string, value: unknown, allowed: readonly T[], fallback: T): T {
  return value === undefined ? fallback : oneOfOption(key, value, allowed);
}

type Group<K extends keyof OutboxOptions> = OptionKeys<NonNullable<OutboxOptions[K]>>;

/** Every key, by level; the compiler checks each table against OutboxOptions. */
const OPTION_KEYS = {
  retry: { maxRetries: true, backoff: true, initialDelay: true, maxDelay: true } satisfies Group<'retry'>,
  lease: {
    duration: true,
    heartbeatInterval: true,
    heartbeatFailureTolerance: true,
  } satisfies Group<'lease'>,
  poisonGuard: { maxClaims: true } satisfies Group<'poisonGuard'>,
  ordering: { failedHead: true } satisfies Group<'ordering'>,
  listen: {
    reconnectInitialDelay: true,
    reconnectMaxDelay: true,
    keepaliveInterval: true,
    keepaliveTimeout: true,
  } satisfies Group<'listen'>,
  circuit: {
    failureThreshold: true,
    openMs: true,
    maxOpenMs: true,
    probeBatchSize: true,
  } satisfies Group<'circuit'>,
} as const;
const TOP_LEVEL_KEYS = {
  ...OPTION_KEYS,
  stuckThreshold: true,
  pollInterval: true,
  batchSize: true,
  maxBatchBytes: true,
  pipelineDepth: true,
  onSent: true,
  recoveryBatchSize: true,
  shutdownTimeout: true,
  publishTimeout: true,
  statementTimeout: true,
  errorBackoff: true,
  channel: true,
  redact: true,
} as const satisfies Record<keyof OutboxOptions, unknown>;

/**
 * Every top-level key of OutboxOptions (checked by the compiler). Wrappers such as @ferry/nestjs
 * take their option list from here, so a new option needs no edit there.
 */
export const OUTBOX_OPTION_KEYS: readonly (keyof OutboxOptions)[] = Object.freeze(
  Object.keys(TOP_LEVEL_KEYS) as (keyof OutboxOptions)[],
);

/**
 * Rejects unknown keys at the top level and inside each group (`retry.`, `lease.` ...) and
 * returns the options' snapshot, its groups snapshotted too: each option read once.
 */
function checkKnownKeys(options: OutboxOptions): OutboxOptions {
  const snapshot: Record<string, unknown> = knownKeysOption(
    '',
    options as Record<string, unknown>,
    Object.keys(TOP_LEVEL_KEYS),
  );
  for (const [group, keys] of Object.entries(OPTION_KEYS)) {
    const value = knownKeysOption(`${group}.`, snapshot[group], keys);
    if (value !== undefined) snapshot[group] = value;
  }
  return snapshot as OutboxOptions;
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
  // The key as the caller wrote it: the deprecated alias out of bounds is refused as itself.
  const durationKey =
    options.stuckThreshold !== undefined && options.lease?.duration === undefined
      ? 'stuckThreshold'
      : 'lease.duration';
  const durationRule = OUTBOX_DEFAULTS['lease.duration'];
  const duration =
    durationInput === undefined
      ? durationRule.default
      : integerOption(durationKey, durationInput, durationRule.min, durationRule.max);
  const toleranceInput = options.lease?.heartbeatFailureTolerance;
  const heartbeatFailureTolerance = int('lease.heartbeatFailureTolerance', toleranceInput);
  const intervalInput = options.lease?.heartbeatInterval;
  const rule = OUTBOX_DEFAULTS['lease.heartbeatInterval'];
  const heartbeatInterval = leaseHeartbeatInterval(
    {
      duration: durationKey,
      interval: 'lease.heartbeatInterval',
      tolerance: 'lease.heartbeatFailureTolerance',
    },
    { value: duration, given: durationInput !== undefined },
    {
      value: intervalInput === undefined ? undefined : int('lease.heartbeatInterval', intervalInput),
      default: rule.default,
      min: rule.min,
    },
    { value: heartbeatFailureTolerance, given: toleranceInput !== undefined },
  );
  return { duration, heartbeatInterval, heartbeatFailureTolerance };
}

/** Resolves the retry part alone (emit needs only maxRetries). */
export function resolveRetryOptions(retry: OutboxOptions['retry'] = {}): ResolvedOutboxOptions['retry'] {
  const initialDelay = int('retry.initialDelay', retry.initialDelay);
  const maxDelay = ceilingOption(
    'retry.maxDelay',
    retry.maxDelay === undefined ? undefined : int('retry.maxDelay', retry.maxDelay),
    OUTBOX_DEFAULTS['retry.maxDelay'].default,
    { name: 'retry.initialDelay', value: initialDelay, given: retry.initialDelay !== undefined },
  );
  return {
    maxRetries: int('retry.maxRetries', retry.maxRetries),
    backoff: oneOf('retry.backoff', retry.backoff, ['fixed', 'exponential'], 'exponential'),
    initialDelay,
    maxDelay,
  };
}

function resolveCircuit(circuit: OutboxOptions['circuit'] = {}): CircuitOptions {
  const openMs = int('circuit.openMs', circuit.openMs);
  const maxOpenMs = ceilingOption(
    'circuit.maxOpenMs',
    circuit.maxOpenMs === undefined ? undefined : int('circuit.maxOpenMs', circuit.maxOpenMs),
    OUTBOX_DEFAULTS['circuit.maxOpenMs'].default,
    { name: 'circuit.openMs', value: openMs, given: circuit.openMs !== undefined },
  );
  return {
    failureThreshold: int('circuit.failureThreshold', circuit.failureThreshold),
    openMs,
    maxOpenMs,
    probeBatchSize: int('circuit.probeBatchSize', circuit.probeBatchSize),
  };
}

/** Every object resolveOutboxOptions returned: resolving one of them again returns it unchanged. */
const resolvedByCore = new WeakSet<object>();

/**
 * createRelay's options as the caller wrote them: `retry.maxRetries` is refused there. Each row
 * carries the max_retries its emitter stored (createEmitter({ retry: { maxRetries } }), or the
 * event's own maxRetries; the spec: "stored per-record at emit time"), so a relay's value limited
 * nothing: one set to 1 to stop hammering a broker still saw five attempts per event. Options
 * resolveOutboxOptions returned pass (a wrapper such as @ferry/nestjs resolves one configuration
 * for its emitter and relay; the emitter gets the value).
 */
export function refuseRelayMaxRetries(options: OutboxOptions | ResolvedOutboxOptions | undefined): void {
  if (options === undefined || resolvedByCore.has(options)) return;
  if ((options as OutboxOptions).retry?.maxRetries === undefined) return;
  throw new FerryConfigError(
    'retry.maxRetries',
    "is not a relay option: max retries are fixed per event at emit, set them on createEmitter({ retry: { maxRetries } }) or an event's maxRetries (each row keeps the max_retries it was emitted with)",
  );
}

/**
 * Fills defaults, checks every bound and throws FerryConfigError (FERRY_CONFIG_INVALID)
 * naming the first bad option. Pure: no I/O, no logging. Given options it returned itself, it
 * returns them as they are: a wrapper (e.g. @ferry/nestjs) resolves once at startup and hands
 * the result to createRelay, which neither checks them again nor repeats their warnings.
 */
export function resolveOutboxOptions(
  options: OutboxOptions | ResolvedOutboxOptions = {},
): ResolvedOutboxOptions {
  if (resolvedByCore.has(options)) return options as ResolvedOutboxOptions;
  const resolved = resolveFresh(options as OutboxOptions);
  resolvedByCore.add(resolved);
  return resolved;
}

/**
 * createRelay's `options`: resolveOutboxOptions's result, with `retry.maxRetries` refused
 * (refuseRelayMaxRetries), both from one snapshot of the options (each read once, review 142).
 */
export function resolveRelayOptions(
  options: OutboxOptions | ResolvedOutboxOptions = {},
): ResolvedOutboxOptions {
  if (resolvedByCore.has(options)) return options as ResolvedOutboxOptions;
  const snapshot = checkKnownKeys(options as OutboxOptions);
  const resolved = resolveOutboxOptions(snapshot);
  refuseRelayMaxRetries(snapshot);
  return resolved;
}

function resolveFresh(given: OutboxOptions): ResolvedOutboxOptions {
  const options = checkKnownKeys(given);
  const warnings: string[] = [];
  const channel = options.channel ?? OUTBOX_DEFAULT_CHANNEL;
  if (typeof channel !== 'string' || !CHANNEL_PATTERN.test(channel)) {
    throw new FerryConfigError('channel', `must match /^[a-z_][a-z0-9_]{0,62}$/, got ${received(channel)}`);
  }
  const listen = options.listen;
  const reconnectInitialDelay = int('listen.reconnectInitialDelay', listen?.reconnectInitialDelay);
  const reconnectMaxDelay = ceilingOption(
    'listen.reconnectMaxDelay',
    listen?.reconnectMaxDelay === undefined
      ? undefined
      : int('listen.reconnectMaxDelay', listen.reconnectMaxDelay),
    OUTBOX_DEFAULTS['listen.reconnectMaxDelay'].default,
    {
      name: 'listen.reconnectInitialDelay',
      value: reconnectInitialDelay,
      given: listen?.reconnectInitialDelay !== undefined,
    },
  );
  return {
    retry: resolveRetryOptions(options.retry),
    lease: resolveLease(options, warnings),
    pollInterval: int('pollInterval', options.pollInterval),
    batchSize: int('batchSize', options.batchSize),
    maxBatchBytes: int('maxBatchBytes', options.maxBatchBytes),
    pipelineDepth: int('pipelineDepth', options.pipelineDepth),
    onSent: oneOf('onSent', options.onSent, ['keep', 'delete'], 'keep'),
    recoveryBatchSize: int('recoveryBatchSize', options.recoveryBatchSize),
    poisonGuard: { maxClaims: int('poisonGuard.maxClaims', options.poisonGuard?.maxClaims) },
    ordering: {
      failedHead: oneOf('ordering.failedHead', options.ordering?.failedHead, ['block', 'skip'], 'block'),
    },
    shutdownTimeout: int('shutdownTimeout', options.shutdownTimeout),
    publishTimeout:
      options.publishTimeout === undefined
        ? null
        : integerOption('publishTimeout', options.publishTimeout, 1, MAX_DELAY_BOUND_MS),
    statementTimeout: int('statementTimeout', options.statementTimeout),
    errorBackoff: int('errorBackoff', options.errorBackoff),
    channel,
    listen: {
      reconnectInitialDelay,
      reconnectMaxDelay,
      keepaliveInterval: int('listen.keepaliveInterval', options.listen?.keepaliveInterval),
      keepaliveTimeout: int('listen.keepaliveTimeout', options.listen?.keepaliveTimeout),
    },
    circuit: resolveCircuit(options.circuit),
    redact: redactOption(options.redact),
    warnings,
  };
}
