import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * The one home of @ferry/testing's timers: Node's own `node:timers`, which jest.useFakeTimers()
 * (modern or legacy) does not replace, so every deadline, poll pause and delay of the helpers
 * (waits, pause, the in-memory broker's retry delays and consumer backoffs, the conformance
 * suite) runs on real time also in a test that fakes the global timers. Faked, a wait's deadline
 * never came and the test hung until jest's own timeout.
 */
export { clearTimeout, setTimeout };

/**
 * Resolves after `ms` of real time, or at once when `signal` aborts (never rejects). The timer
 * keeps no process alive when `unref` is set.
 */
export async function realDelay(ms: number, signal?: AbortSignal, unref = false): Promise<void> {
  await delay(ms, undefined, { signal, ref: !unref }).catch(() => undefined);
}
