/**
 * The one way ferry gives a wait a deadline: a signal that aborts `ms` after it is made, or at
 * once when any of `stops` aborts (with that signal's reason).
 *
 * Not `AbortSignal.any([stop, AbortSignal.timeout(ms)])`: Node 20 holds a timeout signal only
 * weakly once it is combined, so a garbage collection while the wait runs drops its timer and
 * the combined signal never aborts: the wait has no deadline after all. Here the timer holds the
 * controller strongly until it fires (it is unref'd, like AbortSignal.timeout: a deadline alone
 * does not keep the process running) and is cleared as soon as a stop aborts the signal first.
 */
export function deadlineSignal(ms: number, ...stops: readonly AbortSignal[]): AbortSignal {
  const timeout = new AbortController();
  const timer = setTimeout(
    () =>
      timeout.abort(new DOMException(`The operation was aborted due to timeout (${ms} ms)`, 'TimeoutError')),
    ms,
  );
  timer.unref();
  if (stops.length === 0) return timeout.signal;
  const signal = AbortSignal.any([timeout.signal, ...stops]);
  if (signal.aborted) clearTimeout(timer);
  else signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  return signal;
}
