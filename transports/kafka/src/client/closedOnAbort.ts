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
  const abort = () => void close().catch(() => undefined);
  signal.addEventListener('abort', abort, { once: true });
  try {
    return await work();
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
