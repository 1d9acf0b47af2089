/**
 * The one way ferry gives a wait a deadline: a signal that aborts `ms` after it is made, or at
 * once when any of `stops` aborts (with that signal's reason).
 *
 * Not `AbortSignal.any([stop, AbortSignal.timeout(ms)])`: Node 20 holds a timeout signal only
 * weakly once it is combined, so a garbage collection while the wait runs drops its timer and
 * the combined signal never aborts: the wait has no deadline after all. Here the timer holds the
 * controller strongly until it fires (it is unref'd, like AbortSignal.timeout: a deadline alone
 * does not keep the process running) and is cleared as soon as a stop aborts the signal first.
 * The stops are listened to through onAbort and let go when the deadline passes or one aborts:
 * `AbortSignal.any` kept every signal combined with a stop in that stop until it aborted, so a
 * stop living far longer than its deadlines (a consumer's, one deadline per poll) gathered one
 * entry per call for ever (review 99). A wait that usually ends first: clearableDeadline.
 */
export function deadlineSignal(ms: number, ...stops: readonly AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  const aborted = stops.find((stop) => stop.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return controller.signal;
  }
  const unlistens: (() => void)[] = [];
  const end = (reason: unknown): void => {
    clearTimeout(timer);
    for (const unlisten of unlistens) unlisten();
    controller.abort(reason);
  };
  const timer = setTimeout(
    () => end(new DOMException(`The operation was aborted due to timeout (${ms} ms)`, 'TimeoutError')),
    ms,
  );
  timer.unref();
  for (const stop of stops) unlistens.push(onAbort(stop, () => end(stop.reason)));
  return controller.signal;
}

/** The waits listening to a signal through onAbort, and the one listener they share on it. */
interface Waiters {
  readonly calls: Set<{ readonly call: () => void }>;
  readonly fire: () => void;
}
const waitersOf = new WeakMap<AbortSignal, Waiters>();

/**
 * Calls `listener` once when `signal` (not aborted yet: check first) aborts, until the returned `stop` is called (call it when
 * the wait ends). However many waits listen to one signal at once (a caller's signal over many
 * statements, a shutdown signal over every lane), the signal holds one listener of ferry's, and
 * none once they all stopped: a listener each would pass Node's limit of 10 (a
 * MaxListenersExceededWarning, "possible memory leak") with 11 in flight. A listener that throws
 * is reported as an EventTarget listener's throw would be (an uncaught exception), after the others ran.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let waiters = waitersOf.get(signal);
  if (waiters === undefined) {
    const calls = new Set<{ readonly call: () => void }>();
    const fire = (): void => {
      waitersOf.delete(signal);
      for (const entry of [...calls]) {
        // A waiter stopped by one called before it is not called, as with EventTarget.
        if (!calls.delete(entry)) continue;
        try {
          entry.call();
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    };
    waiters = { calls, fire };
    waitersOf.set(signal, waiters);
    signal.addEventListener('abort', fire, { once: true });
  }
  const entry = { call: listener };
  const { calls, fire } = waiters;
  calls.add(entry);
  return () => {
    if (!calls.delete(entry) || calls.size > 0 || waitersOf.get(signal)?.calls !== calls) return;
    waitersOf.delete(signal);
    signal.removeEventListener('abort', fire);
  };
}

/** A signal for one call, let go of what it listens to by clear(): see clearableAny. */
export interface ClearableSignal {
  /** Aborts when the first of its stops aborts (that stop's reason). */
  readonly signal: AbortSignal;
  /** The call ended: its stops are let go; the signal never aborts after this. */
  clear(): void;
}

/**
 * A signal that aborts when the first of `stops` aborts, for a call that joins a signal living far
 * longer than it (a publisher's or consumer's closing one) with its own. Not `AbortSignal.any`:
 * Node 20 keeps every signal combined with a source in that source until the source aborts, so a
 * closing signal gathered one entry per call (per publish, per batch) for the life of its owner
 * (review 99). Listened to through onAbort, and let go by clear() when the call ends.
 */
export function clearableAny(stops: readonly AbortSignal[]): ClearableSignal {
  const controller = new AbortController();
  const aborted = stops.find((stop) => stop.aborted);
  if (aborted !== undefined) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, clear: () => undefined };
  }
  const clear = (): void => {
    for (const unlisten of unlistens) unlisten();
  };
  const unlistens = stops.map((stop) =>
    onAbort(stop, () => {
      clear();
      controller.abort(stop.reason);
    }),
  );
  return { signal: controller.signal, clear };
}

/** A deadline for one wait that usually ends first: see clearableDeadline. */
export interface ClearableDeadline {
  /** Aborts `ms` after it was made (a TimeoutError), or at once when `stop` aborts (its reason). */
  readonly signal: AbortSignal;
  /** The wait ended: the timer stops and `stop` is let go; the signal never aborts after this. */
  clear(): void;
}

/**
 * deadlineSignal for a wait that is over far more often than it times out (one per statement):
 * one controller and one timer, no combined signal, and nothing built when it is cleared. Aborting
 * a controller only to stop its timer builds a DOMException with a stack trace each time (about
 * a tenth of a millisecond of CPU here, per statement).
 */
export function clearableDeadline(ms: number, stop?: AbortSignal): ClearableDeadline {
  const controller = new AbortController();
  if (stop?.aborted) {
    controller.abort(stop.reason);
    return { signal: controller.signal, clear: () => undefined };
  }
  const timer = setTimeout(() => {
    unlisten();
    controller.abort(new DOMException(`The operation was aborted due to timeout (${ms} ms)`, 'TimeoutError'));
  }, ms);
  timer.unref();
  const unlisten = stop
    ? onAbort(stop, () => {
        clearTimeout(timer);
        controller.abort(stop.reason);
      })
    : () => undefined;
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      unlisten();
    },
  };
}
