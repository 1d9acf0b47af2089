/** What onEvent needs of an emitter (a node EventEmitter, an amqplib connection or channel). */
export interface EventSource {
  on(event: string | symbol, listener: (...args: unknown[]) => void): unknown;
  off(event: string | symbol, listener: (...args: unknown[]) => void): unknown;
}

/** The calls listening to one event of an emitter through onEvent, and the listener they share. */
interface Listening {
  readonly calls: Set<{ readonly call: (...args: unknown[]) => void }>;
  readonly fire: (...args: unknown[]) => void;
}
const listeningTo = new WeakMap<EventSource, Map<string | symbol, Listening>>();

/**
 * Calls `listener` on each `event` of a long-lived `emitter` (a connection, a shared channel) until
 * the returned `stop` is called (call it when the call ends): onAbort's counterpart for an
 * EventEmitter. However many calls listen at once (the publishes in flight on one publisher), the
 * emitter holds one listener of ferry's per event, and none once they all stopped: a listener each
 * passed Node's limit of 10 (a MaxListenersExceededWarning, "possible EventEmitter memory leak")
 * with 11 calls in flight (review 156). A listener that throws is reported as an uncaught
 * exception after the others ran, as onAbort reports one.
 */
export function onEvent(
  emitter: EventSource,
  event: string | symbol,
  listener: (...args: unknown[]) => void,
): () => void {
  const events = listeningTo.get(emitter) ?? new Map<string | symbol, Listening>();
  listeningTo.set(emitter, events);
  let listening = events.get(event);
  if (listening === undefined) {
    const calls: Listening['calls'] = new Set();
    const fire = (...args: unknown[]): void => {
      for (const entry of [...calls]) {
        // A caller stopped by one called before it is not called, as with EventEmitter.off.
        if (!calls.has(entry)) continue;
        try {
          entry.call(...args);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    };
    listening = { calls, fire };
    events.set(event, listening);
    emitter.on(event, fire);
  }
  const entry = { call: listener };
  const { calls, fire } = listening;
  calls.add(entry);
  return () => {
    if (!calls.delete(entry) || calls.size > 0 || events.get(event)?.calls !== calls) return;
    events.delete(event);
    if (events.size === 0) listeningTo.delete(emitter);
    emitter.off(event, fire);
  };
}
