import { onAbort } from '@ferry/core/transport';

/**
 * Runs `work` (a connect); if `signal` aborts first, the client is closed, which fails the work
 * at once and cancels the client's retries of it.
 */
export async function closedOnAbort<T>(
  signal: AbortSignal,
  close: () => Promise<unknown>,
  work: () => Promise<T>,
): Promise<T> {
  if (signal.aborted) throw signal.reason;
  // Through onAbort: an owner's closing signal holds one listener however many connect at once.
  const stop = onAbort(signal, () => void close().catch(() => undefined));
  try {
    return await work();
  } finally {
    stop();
  }
}

/**
 * Calls `destroy` once `signal` aborts (at once if it has), unless the returned function was
 * called first: a connected client whose owner is closing ends at once (KafkaClientDriver.admin).
 * Without a signal, nothing is watched.
 */
export function destroyedOnAbort(
  signal: AbortSignal | undefined,
  destroy: () => Promise<unknown>,
): () => void {
  if (signal === undefined) return () => undefined;
  const abort = () => void destroy().catch(() => undefined);
  if (signal.aborted) {
    abort();
    return () => undefined;
  }
  return onAbort(signal, abort);
}
