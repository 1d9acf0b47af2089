import { describe, expect, it } from '@jest/globals';
import { abortedWithin, collectGarbageSoon } from '../../../test-support/deadlines';
import { requestDeadline } from './deadline';

describe('requestDeadline', () => {
  // Node 20's AbortSignal.timeout() is held only weakly once combined with AbortSignal.any():
  // after a garbage collection the combined signal never aborted, so a request SQS did not
  // answer waited forever.
  it('aborts after its deadline even when a garbage collection runs while it waits', async () => {
    const stop = new AbortController();
    const signal = requestDeadline(100, stop.signal);
    const aborted = abortedWithin(signal, 2_000);
    await collectGarbageSoon();
    expect(await aborted).toBe(true);
    expect(stop.signal.aborted).toBe(false);
  });

  it('aborts after its deadline without a stop signal, across a garbage collection', async () => {
    const signal = requestDeadline(100);
    const aborted = abortedWithin(signal, 2_000);
    await collectGarbageSoon();
    expect(await aborted).toBe(true);
  });

  it('aborts at once when the stop signal aborts, with its reason', async () => {
    const stop = new AbortController();
    const signal = requestDeadline(60_000, stop.signal);
    stop.abort(new Error('closed'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toEqual(new Error('closed'));
  });
});
