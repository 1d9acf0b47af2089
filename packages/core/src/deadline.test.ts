import { describe, expect, it } from '@jest/globals';
import { abortedWithin, collectGarbageSoon, heldBy } from '../../../test-support/deadlines';
import { getEventListeners } from 'node:events';
import { clearableAny, clearableDeadline, deadlineSignal, onAbort } from './deadline';

describe('deadlineSignal', () => {
  it('aborts after its deadline with a TimeoutError, across a garbage collection', async () => {
    const stop = new AbortController();
    const signal = deadlineSignal(100, stop.signal);
    const aborted = abortedWithin(signal, 2_000);
    await collectGarbageSoon();
    expect(await aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
    expect(stop.signal.aborted).toBe(false);
  });

  it('aborts after its deadline with several stops or none, across a garbage collection', async () => {
    const signals = [
      deadlineSignal(100),
      deadlineSignal(100, new AbortController().signal, new AbortController().signal),
    ];
    const aborted = signals.map((signal) => abortedWithin(signal, 2_000));
    await collectGarbageSoon();
    expect(await Promise.all(aborted)).toEqual([true, true]);
  });

  it('aborts at once with the reason of the first stop that aborts', () => {
    const first = new AbortController();
    const second = new AbortController();
    const signal = deadlineSignal(60_000, first.signal, second.signal);
    expect(signal.aborted).toBe(false);
    second.abort(new Error('closed'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toEqual(new Error('closed'));
  });

  it('is aborted from the start when a stop already is', () => {
    const stop = new AbortController();
    stop.abort(new Error('gone'));
    const signal = deadlineSignal(60_000, stop.signal);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toEqual(new Error('gone'));
  });

  // Review 99: deadlineSignal joined its stops with AbortSignal.any, and Node 20 keeps every
  // signal combined with a source in that source until the source aborts. A stop living far longer
  // than the deadlines made from it (an SQS consumer's stop, one deadline per long poll; a
  // RabbitMQ consumer's closing signal, one per dead-letter copy) gathered an entry per call, for
  // ever. A deadline lets go of its stops when it passes.
  it('leaves nothing in a long-lived stop once its deadline passed', async () => {
    const stop = new AbortController();
    const signals = Array.from({ length: 200 }, () => deadlineSignal(5, stop.signal));
    await Promise.all(signals.map((signal) => abortedWithin(signal, 2_000)));
    expect(heldBy(stop.signal)).toBe(0);
    expect(stop.signal.aborted).toBe(false);
  });
});

describe('clearableDeadline', () => {
  it('aborts after its deadline with a TimeoutError, across a garbage collection', async () => {
    const stop = new AbortController();
    const deadlines = [clearableDeadline(100, stop.signal), clearableDeadline(100)];
    const aborted = deadlines.map((deadline) => abortedWithin(deadline.signal, 2_000));
    await collectGarbageSoon();
    expect(await Promise.all(aborted)).toEqual([true, true]);
    for (const deadline of deadlines)
      expect((deadline.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(stop.signal.aborted).toBe(false);
  });

  it('aborts at once with the reason of its stop, or from the start when the stop already aborted', () => {
    const stop = new AbortController();
    const deadline = clearableDeadline(60_000, stop.signal);
    expect(deadline.signal.aborted).toBe(false);
    stop.abort(new Error('closed'));
    expect(deadline.signal.reason).toEqual(new Error('closed'));
    expect(clearableDeadline(60_000, stop.signal).signal.reason).toEqual(new Error('closed'));
  });

  it('never aborts once cleared, neither at its deadline nor when its stop aborts', async () => {
    const stop = new AbortController();
    const deadline = clearableDeadline(50, stop.signal);
    deadline.clear();
    expect(await abortedWithin(deadline.signal, 300)).toBe(false);
    stop.abort(new Error('closed'));
    expect(deadline.signal.aborted).toBe(false);
  });
});

describe('onAbort', () => {
  it('calls every waiter once through one listener, the others even when one throws', async () => {
    const stop = new AbortController();
    const called: number[] = [];
    const thrown = new Promise<unknown>((resolve) => {
      const original = queueMicrotask;
      globalThis.queueMicrotask = (task) =>
        original(() => {
          try {
            task();
          } catch (error) {
            resolve(error);
          } finally {
            globalThis.queueMicrotask = original;
          }
        });
    });
    onAbort(stop.signal, () => called.push(1));
    onAbort(stop.signal, () => {
      throw new Error('a waiter failed');
    });
    const stopThird = onAbort(stop.signal, () => called.push(3));
    onAbort(stop.signal, () => called.push(4));
    stopThird();
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort();
    expect(called).toEqual([1, 4]);
    expect(await thrown).toEqual(new Error('a waiter failed'));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('does not call a waiter that one called before it stopped', () => {
    const stop = new AbortController();
    const called: string[] = [];
    let stopSecond: () => void = () => undefined;
    onAbort(stop.signal, () => {
      called.push('first');
      stopSecond();
    });
    stopSecond = onAbort(stop.signal, () => called.push('second'));
    stop.abort();
    expect(called).toEqual(['first']);
  });

  it('lets the signal go once the last waiter stopped, and listens again for a new one', () => {
    const stop = new AbortController();
    const first = onAbort(stop.signal, () => undefined);
    first();
    first(); // twice: harmless
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    let called = false;
    onAbort(stop.signal, () => (called = true));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort();
    expect(called).toBe(true);
  });
});

describe('clearableAny', () => {
  it('aborts with the first stop that aborts, and with none once cleared (no listener left on a stop)', () => {
    const closing = new AbortController();
    const call = new AbortController();
    const first = clearableAny([call.signal, closing.signal]);
    call.abort(new Error('lease lost'));
    expect(first.signal.reason).toEqual(new Error('lease lost'));
    first.clear();
    const second = clearableAny([new AbortController().signal, closing.signal]);
    second.clear();
    expect(getEventListeners(closing.signal, 'abort')).toHaveLength(0);
    closing.abort(new Error('closed'));
    expect(second.signal.aborted).toBe(false);
    expect(clearableAny([closing.signal]).signal.reason).toEqual(new Error('closed'));
  });
});
