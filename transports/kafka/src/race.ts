import { describeError } from './errors';

/**
 * Settles with `work`, or rejects as soon as a signal aborts (`<what> abandoned: <reason>`) or
 * `timeoutMs` passes (`<what> not confirmed within <ms> ms`). `work` goes on unobserved, so
 * whoever started it must make sure it is undone when it finishes late.
 */
export function raceAbort(
  work: Promise<unknown>,
  signals: readonly AbortSignal[],
  what: string,
  timeoutMs?: number,
): Promise<void> {
  work.catch(() => undefined);
  return new Promise<void>((resolve, reject) => {
    const cleanups: (() => void)[] = [];
    const settle = (fn: () => void) => {
      for (const cleanup of cleanups) cleanup();
      fn();
    };
    if (timeoutMs !== undefined) {
      const timer = setTimeout(
        () => settle(() => reject(new Error(`${what} not confirmed within ${timeoutMs} ms`))),
        timeoutMs,
      );
      cleanups.push(() => clearTimeout(timer));
    }
    for (const signal of signals) {
      const onAbort = () => settle(() => reject(abandonedError(what, signal)));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      cleanups.push(() => signal.removeEventListener('abort', onAbort));
    }
    work.then(
      () => settle(resolve),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/**
 * Throws what raceAbort would reject with when one of `signals` already aborted: for callers that
 * must not start `what` at all then (work started and raced would go on unobserved).
 */
export function throwIfAborted(signals: readonly AbortSignal[], what: string): void {
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted) throw abandonedError(what, aborted);
}

function abandonedError(what: string, signal: AbortSignal): Error {
  return new Error(`${what} abandoned: ${describeError(signal.reason)}`, { cause: signal.reason });
}
