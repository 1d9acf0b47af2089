/**
 * Review 100: core's deadline helpers after review 99 (deadlineSignal through onAbort,
 * clearableAny, clearableDeadline), hostile uses: reentrancy (a stop's abort handler making new
 * deadlines on the same stop), listeners that throw or clear others while the stop's waiters are
 * called, the stop's reason, deadlines nobody holds while their stop lives on, and many thousands
 * of them on one stop.
 */
import { getEventListeners } from 'node:events';
import { abortedWithin, collectGarbageSoon } from '../../../test-support/deadlines';
import {
  clearableAny,
  clearableDeadline,
  deadlineSignal,
  onAbort,
  type ClearableDeadline,
} from '../src/deadline';

const BOUND_MS = 5_000;

/** Resolves once `signal` has no 'abort' listener left, false after BOUND_MS. */
async function letGo(signal: AbortSignal): Promise<boolean> {
  for (const stop = Date.now() + BOUND_MS; Date.now() < stop;) {
    if (getEventListeners(signal, 'abort').length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

describe('review100: a stop aborting while its waiters are called', () => {
  it('a deadline made on the stop inside its abort handlers is aborted at once with its reason', () => {
    const stop = new AbortController();
    const reason = new Error('closing');
    const made: AbortSignal[] = [];
    const makeAll = (): void => {
      made.push(deadlineSignal(60_000, stop.signal));
      made.push(clearableDeadline(60_000, stop.signal).signal);
      made.push(clearableAny([stop.signal, new AbortController().signal]).signal);
    };
    // A listener of the stop itself, one of a deadline made from it, and a waiter through onAbort.
    stop.signal.addEventListener('abort', makeAll);
    deadlineSignal(60_000, stop.signal).addEventListener('abort', makeAll);
    onAbort(stop.signal, makeAll);
    stop.abort(reason);
    expect(made).toHaveLength(9);
    for (const signal of made) expect(signal.reason).toBe(reason);
  });

  it('a deadline cleared by another waiter during the abort is not aborted; the others are', () => {
    const stop = new AbortController();
    // Made after `first`, so called after it: cleared by first's abort listener before its turn.
    const made: { later?: ClearableDeadline } = {};
    const first = deadlineSignal(60_000, stop.signal);
    first.addEventListener('abort', () => made.later?.clear());
    const later = clearableDeadline(60_000, stop.signal);
    made.later = later;
    const any = clearableAny([stop.signal]);
    first.addEventListener('abort', () => any.clear());
    const last = deadlineSignal(60_000, stop.signal);
    stop.abort('stopped');
    expect([first.reason, last.reason]).toEqual(['stopped', 'stopped']);
    expect(later.signal.aborted).toBe(false);
    expect(any.signal.aborted).toBe(false);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});

describe('review100: deadlines nobody holds, on a stop that lives on', () => {
  it('still fire and let the stop go across a garbage collection', async () => {
    const stop = new AbortController();
    const fired: boolean[] = [];
    for (let i = 0; i < 1_000; i += 1) {
      deadlineSignal(50, stop.signal).addEventListener('abort', () => fired.push(true));
      clearableDeadline(50, stop.signal).signal.addEventListener('abort', () => fired.push(true));
    }
    await collectGarbageSoon();
    expect(await letGo(stop.signal)).toBe(true);
    expect(fired).toHaveLength(2_000);
    expect(stop.signal.aborted).toBe(false);
  });
});

describe('review100: many thousands of deadlines on one stop', () => {
  it('one listener on the stop, no warning, every one aborted with its reason, nothing left after', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      const signals = Array.from({ length: 20_000 }, (_, i) =>
        i % 3 === 0
          ? deadlineSignal(60_000, stop.signal)
          : i % 3 === 1
            ? clearableDeadline(60_000, stop.signal).signal
            : clearableAny([stop.signal]).signal,
      );
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      const reason = new Error('closing');
      stop.abort(reason);
      expect(signals.every((signal) => signal.reason === reason)).toBe(true);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('deadlines that pass one by one let go of the stop, which still aborts later ones', async () => {
    const stop = new AbortController();
    const passed = Array.from({ length: 5_000 }, (_, i) => deadlineSignal(1 + (i % 20), stop.signal));
    expect((await Promise.all(passed.map((s) => abortedWithin(s, BOUND_MS)))).every(Boolean)).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    const later = deadlineSignal(60_000, stop.signal);
    stop.abort('late');
    expect(later.reason).toBe('late');
  });
});
