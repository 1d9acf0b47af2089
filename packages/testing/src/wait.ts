import {
  knownKeysOption,
  received,
  requiredFunctionOption,
  timerOption,
  type OptionKeys,
} from '@ferry/core/transport';
import { realDelay } from './realTimers';
import { CallUnsettled, WaitDeadline } from './waitDeadline';
/**
 * The one wait-until of ferry's tests (and of applications' tests): polls a probe until it
 * yields a value, or fails at a deadline. Every test helper that waits delegates here.
 */
export interface WaitOptions {
  /** Deadline in milliseconds (default 30,000). */
  readonly timeoutMs?: number;
  /** Pause between polls in milliseconds (default 25). */
  readonly intervalMs?: number;
}

/** waitUntil's deadline came first: `what` it waited for, its `timeoutMs` and the probe's `last` answer. */
export class WaitTimeoutError extends Error {
  /** As InboxDrainTimeoutError and InboxRecordWaitTimeoutError. */
  readonly code = 'FERRY_TIMEOUT' as const;
  constructor(
    /** What the wait was for (waitUntil's `what`). */
    readonly what: string,
    readonly timeoutMs: number,
    /** The probe's last answer, or the error it last threw. */
    readonly last: unknown,
    /** True when the probe's call in flight at the deadline had not settled (it was left to itself). */
    readonly unsettled = false,
  ) {
    const pending = unsettled ? ": the probe's call had not settled" : '';
    super(
      `timed out after ${timeoutMs} ms waiting for ${what}${pending}; last value: ${describeValue(last)}`,
    );
    this.name = 'WaitTimeoutError';
  }
}

/**
 * The probe's last answer or error as the timeout names it. Never throws: a value that cannot be
 * read so (a revoked Proxy, a throwing `message` getter, a circular object without a prototype)
 * is shown as core's `received` shows it, not a TypeError in place of the timeout (review 136).
 */
function describeValue(value: unknown): string {
  try {
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  } catch {
    return received(value);
  }
}

/** Resolves after `ms` of real time, also under jest's fake timers (realTimers). */
export function pause(ms: number): Promise<void> {
  return realDelay(ms);
}

/**
 * Resolves with the first value `probe` returns that is not undefined, null or false (0 and ''
 * count as values). A probe that throws counts as "not yet" (a broker refuses connections while
 * it restarts); the last error is reported on timeout. A probe's call that has not settled at the
 * deadline fails the wait then (WaitTimeoutError, `unsettled`), it is not waited for. A number
 * for `options` is the timeout.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: WaitOptions | number = {},
): Promise<Exclude<T, undefined | null | false>> {
  requiredFunctionOption('probe', probe);
  const given = knownKeysOption('', typeof options === 'number' ? { timeoutMs: options } : options, {
    timeoutMs: true,
    intervalMs: true,
  } satisfies OptionKeys<WaitOptions>);
  const timeoutMs = timerOption('timeoutMs', given.timeoutMs ?? 30_000, 0);
  const intervalMs = timerOption('intervalMs', given.intervalMs ?? 25, 0);
  const deadline = new WaitDeadline(timeoutMs);
  let last: unknown;
  try {
    for (;;) {
      try {
        const value = await deadline.race(probe);
        if (value !== undefined && value !== null && value !== false) {
          return value as Exclude<T, undefined | null | false>;
        }
        last = value;
      } catch (error) {
        if (CallUnsettled.is(error)) throw new WaitTimeoutError(what, timeoutMs, last, true);
        last = error;
      }
      if (deadline.expired) throw new WaitTimeoutError(what, timeoutMs, last);
      await deadline.pause(intervalMs);
      if (deadline.expired) throw new WaitTimeoutError(what, timeoutMs, last);
    }
  } finally {
    deadline.end();
  }
}
