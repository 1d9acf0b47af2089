import { onAbort } from '../deadline';

/**
 * Resolves true once `work` settles, or false after `ms`, or false at once when `stop` aborts
 * (its timer cleared then: a wait its owner gave up on leaves no timer to fire after it).
 */
export async function settlesWithin(
  work: Promise<unknown>,
  ms: number,
  stop?: AbortSignal,
): Promise<boolean> {
  if (stop?.aborted) return false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten = (): void => undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    if (stop) unlisten = onAbort(stop, () => resolve(false));
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
    unlisten();
  }
}
