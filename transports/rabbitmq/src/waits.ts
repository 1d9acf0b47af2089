/**
 * `shared` as seen by one caller: it settles as `shared` does, or rejects with `reason()` once
 * `signal` aborts first. `shared` runs on (other callers may wait on it): a broker that does not
 * answer a channel open (a silent connection, a node blocking its publishers) holds one pending
 * open, and each caller stops waiting for it at its own deadline.
 */
export function untilAborted<T>(shared: Promise<T>, signal: AbortSignal, reason: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    // Listened to even when the caller has given up already: a rejection of `shared` nobody
    // waits for any more is handled here, not left unhandled.
    shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The longest a close waits for each of the broker's answers (basic.cancel, channel.close,
 * connection.close; less when the component's own timeout is shorter). Each is one round trip,
 * answered in milliseconds by a healthy broker; a node under a resource alarm answers none on a
 * connection that published until the alarm clears. Giving up is safe: a connection closed without
 * its close-ok has its socket destroyed, and the broker requeues what it delivered unacked.
 */
export const CLOSE_ANSWER_MS = 2_000;
