import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection on a later turn (when nothing on the stack still holds what was
 * just made), for tests that prove an object the runtime holds only weakly still does its job:
 * a deadline whose timer nothing else references. Works without `--expose-gc`.
 */
export async function collectGarbageSoon(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 10));
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
}

/** Resolves true once `signal` aborts, false after `ms`. */
export function abortedWithin(signal: AbortSignal, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** What `work` settled with: `{ value }`, `{ error }`, or 'hung' when it has not settled within `ms`. */
export async function outcomeWithin<T>(
  work: Promise<T>,
  ms: number,
): Promise<{ value: T } | { error: unknown } | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  const settled = work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  try {
    return await Promise.race([settled, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How many signals `signal` holds on to for others: Node 20's AbortSignal.any keeps each signal it
 * combined with `signal` in it (a set not listed by getEventListeners) until `signal` aborts, plus
 * its abort listeners. 0: nothing of any call is kept in it.
 */
export function heldBy(signal: AbortSignal): number {
  const dependants = Object.getOwnPropertySymbols(signal)
    .filter((symbol) => symbol.description === 'kDependantSignals')
    .map((symbol) => (signal as unknown as Record<symbol, Set<unknown> | undefined>)[symbol]?.size ?? 0);
  return dependants.reduce((a, b) => a + b, 0) + getEventListeners(signal, 'abort').length;
}
