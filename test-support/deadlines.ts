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
