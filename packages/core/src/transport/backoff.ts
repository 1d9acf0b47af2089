import { FerryConfigError } from '../errors';
import { integerOption } from './optionChecks';

/** Backoff is a pure function of the attempt; the random source is injected for jitter. */
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

/**
 * Delay before retry number `attempt` (1-based): initial * multiplier^(attempt-1), capped at
 * maxMs, then jittered. Never negative, never above maxMs.
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  const raw = policy.initialMs * Math.pow(policy.multiplier, exponent);
  const capped = Math.min(policy.maxMs, Number.isFinite(raw) ? raw : policy.maxMs);
  if (policy.jitter === 'none') return Math.round(capped);
  return Math.round(Math.min(1, Math.max(0, random())) * capped);
}

/** `given` over `defaults`, checked; `name` prefixes the option named in a FerryConfigError. */
export function resolveBackoff(
  name: string,
  given: Partial<BackoffPolicy> | undefined,
  defaults: BackoffPolicy,
): BackoffPolicy {
  const policy = { ...defaults, ...given };
  integerOption(`${name}.initialMs`, policy.initialMs, 1);
  integerOption(`${name}.maxMs`, policy.maxMs, policy.initialMs);
  if (!Number.isFinite(policy.multiplier) || policy.multiplier < 1) {
    throw new FerryConfigError(`${name}.multiplier`, 'must be a finite number >= 1');
  }
  if (policy.jitter !== 'none' && policy.jitter !== 'full') {
    throw new FerryConfigError(`${name}.jitter`, "must be 'none' or 'full'");
  }
  return policy;
}

/**
 * Resolves after `ms`, or rejects with the signal's reason as soon as the signal aborts,
 * so every wait can be cancelled by close().
 */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
