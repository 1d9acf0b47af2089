/** How long a decoding loop may hold the event loop before it gives other work a turn. */
export const DECODE_SLICE_MS = 20;

/**
 * For a loop over deliveries whose decoding can be slow (a body within 6 × maxPayloadBytes is
 * parsed before it is measured: a few hundred milliseconds each): `await turns()` at each step
 * gives the event loop a turn (setImmediate) once `sliceMs` have passed since the last, so a
 * batch of slow bodies never keeps a client from its heartbeats, timers and sockets. Resolves at
 * once (without a turn) within a slice.
 */
export function eventLoopTurns(sliceMs: number = DECODE_SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
