import { onAbort } from './deadline';
import { FerryConfigError } from './errors';
import { knownKeysOption, oneOfOption, received, timerOption, type OptionKeys } from './optionChecks';
import { discardAnswer } from './unreadAnswer';
import { ceilingOption } from './optionRelations';

/**
 * The one home of ferry's backoff formulas (outbox retries, inbox retries, reconnects,
 * transports). Every function is pure; jitter takes its random source as an argument.
 * Components keep their own option names and map them onto a BackoffPolicy here.
 */

/** A source of uniform random numbers in [0, 1); injected so tests can pin jitter. */
export type RandomSource = () => number;

export interface BackoffPolicy {
  /** Delay before the first retry, in milliseconds. */
  readonly initialMs: number;
  /** Upper bound of any delay, in milliseconds. */
  readonly maxMs: number;
  /** Growth factor per attempt (1 = fixed delay). */
  readonly multiplier: number;
  /** `full` draws uniformly from [0, delay]; `none` returns the delay as computed. */
  readonly jitter: 'none' | 'full';
}

/** The capped delay before jitter: min(maxMs, initialMs * multiplier^(attempt - 1)). */
export function backoffCeiling(attempt: number, policy: Omit<BackoffPolicy, 'jitter'>): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 0 * Infinity is NaN: a zero initial delay stays zero however large the attempt.
  if (policy.initialMs === 0) return 0;
  const raw = policy.initialMs * Math.pow(policy.multiplier, exponent);
  return Math.min(policy.maxMs, Number.isFinite(raw) ? raw : policy.maxMs);
}

/**
 * Delay before retry number `attempt` (1-based): the ceiling above, then jittered.
 * Never negative, never above maxMs.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: RandomSource = Math.random,
): number {
  const ceiling = backoffCeiling(attempt, policy);
  if (policy.jitter === 'none') return Math.round(ceiling);
  return Math.round(draw(random) * ceiling);
}

/**
 * One draw of an application's random source, in [0, 1). A source that throws or answers
 * anything else (NaN, ±Infinity, a number below 0 or from 1 up, a Promise) yields 1, the full
 * ceiling: a delay computed from it stays finite (never a NaN timer, which fires at once) and is
 * never the 0 ms that a negative answer clamped to 0 gave every retry (a hot retry loop), and a
 * throw never escapes into the retry it was timing.
 */
function draw(random: RandomSource): number {
  let value: unknown;
  try {
    value = random();
  } catch {
    return 1;
  }
  // `+ 0` turns -0 into 0, so the delay is never -0.
  if (typeof value === 'number' && value >= 0 && value < 1) return value + 0;
  discardAnswer(value);
  return 1;
}

/**
 * Outbox retry delay after `retryCount` failed attempts (spec 000): exponential
 * `min(maxDelay, initialDelay * 2^(retryCount - 1))`, or fixed `initialDelay` (also capped).
 * The caller adds it to the database clock.
 */
export function outboxRetryDelayMs(
  retry: {
    readonly backoff: 'fixed' | 'exponential';
    readonly initialDelay: number;
    readonly maxDelay: number;
  },
  retryCount: number,
): number {
  return backoffDelay(retryCount, {
    initialMs: retry.initialDelay,
    maxMs: retry.maxDelay,
    multiplier: retry.backoff === 'fixed' ? 1 : 2,
    jitter: 'none',
  });
}

/** Capped exponential delay for reconnects and failed poll cycles: initial * 2^failures. */
export function reconnectDelayMs(initial: number, max: number, failures: number): number {
  return backoffDelay(failures + 1, { initialMs: initial, maxMs: max, multiplier: 2, jitter: 'none' });
}

/** Inbox retry ceiling (spec 002) before jitter: min(max, base * 2^(attempt - 1)). */
export function inboxRetryCeilingMs(attempt: number, baseMs: number, maxMs: number): number {
  return backoffCeiling(attempt, { initialMs: baseMs, maxMs, multiplier: 2 });
}

/** Inbox retry delay: full jitter over inboxRetryCeilingMs; `attempt` is the one that just failed. */
export function inboxRetryDelayMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: RandomSource,
): number {
  return backoffDelay(attempt, { initialMs: baseMs, maxMs, multiplier: 2, jitter: 'full' }, random);
}

/**
 * Delay before a claim given back in an outage of the application's pool (its handler transaction
 * got no session, its attempt returned) is due: full jitter over the retry ceiling of its attempt,
 * or over `outageMs`, how long the outage has lasted, when that is longer; at most `maxMs`. The
 * attempt it returned does not grow the delay, so claimed again about once per `baseMs` for ever,
 * every receipt cost a connection attempt and a warning (review 104).
 */
export function inboxOutageDelayMs(
  attempt: number,
  outageMs: number,
  baseMs: number,
  maxMs: number,
  random: RandomSource,
): number {
  const ceiling = Math.min(maxMs, Math.max(inboxRetryCeilingMs(attempt, baseMs, maxMs), outageMs));
  return backoffDelay(1, { initialMs: ceiling, maxMs, multiplier: 1, jitter: 'full' }, random);
}

const POLICY_KEYS = {
  initialMs: true,
  maxMs: true,
  multiplier: true,
  jitter: true,
} as const satisfies OptionKeys<BackoffPolicy>;

/**
 * `given` over `defaults`, checked; `name` prefixes the option named in a FerryConfigError. An
 * unknown key (`reconnectBackoff: { initialMS }`) is refused, not ignored.
 */
export function resolveBackoff(
  name: string,
  given: Partial<BackoffPolicy> | undefined,
  defaults: BackoffPolicy,
): BackoffPolicy {
  given = knownKeysOption(`${name}.`, given, POLICY_KEYS);
  const policy = { ...defaults, ...given };
  // Both go into a timer (abortableDelay): past MAX_TIMER_MS it would fire after 1 ms.
  timerOption(`${name}.initialMs`, policy.initialMs, 1);
  const maxMs = ceilingOption(
    `${name}.maxMs`,
    given?.maxMs === undefined ? undefined : timerOption(`${name}.maxMs`, given.maxMs, 1),
    defaults.maxMs,
    { name: `${name}.initialMs`, value: policy.initialMs, given: given?.initialMs !== undefined },
  );
  if (typeof policy.multiplier !== 'number' || !Number.isFinite(policy.multiplier) || policy.multiplier < 1) {
    throw new FerryConfigError(
      `${name}.multiplier`,
      `must be a finite number >= 1, got ${received(policy.multiplier)}`,
    );
  }
  oneOfOption(`${name}.jitter`, policy.jitter, ['none', 'full'] as const);
  return { ...policy, maxMs };
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as the signal aborts,
 * so every backoff wait can be cancelled by close().
 */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      unlisten();
      resolve();
    }, ms);
    const unlisten = onAbort(signal, () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}
