import { describe, expect, it, jest } from '@jest/globals';
import { outcomeWithin } from '../../../test-support/deadlines';
import { abortableRetries, withRequestSignal } from './sdkRetries';

/** random() answering 1: every wait is its longest. */
const longest = () => 1;

describe('abortableRetries', () => {
  it('retries transient errors and throttling up to maxAttempts, nothing else', async () => {
    const retries = abortableRetries(3, () => 0);
    const first = await retries.acquireInitialRetryToken();
    const second = await retries.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' });
    expect(second.getRetryCount()).toBe(1);
    const third = await retries.refreshRetryTokenForRetry(second, { errorType: 'THROTTLING' });
    expect(third.getRetryCount()).toBe(2);
    await expect(retries.refreshRetryTokenForRetry(third, { errorType: 'TRANSIENT' })).rejects.toThrow(
      'No retry token available',
    );
    await expect(retries.refreshRetryTokenForRetry(first, { errorType: 'CLIENT_ERROR' })).rejects.toThrow(
      'No retry token available',
    );
  });

  it("ends a wait between attempts when the request's signal aborts, its timer cleared", async () => {
    const retries = abortableRetries(10, longest);
    const first = await retries.acquireInitialRetryToken();
    const stop = new AbortController();
    // Throttled, the 5th retry waits 16 s: far beyond the test's deadline unless the abort ends it.
    const waiting = withRequestSignal(stop.signal, () =>
      retries.refreshRetryTokenForRetry({ ...first, getRetryCount: () => 4 }, { errorType: 'THROTTLING' }),
    );
    const timers = process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    stop.abort(new Error('closed'));
    expect(await outcomeWithin(waiting, 5_000)).toEqual({ error: new Error('closed') });
    expect(process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length).toBe(timers - 1);
  });
  it('Review 156 (failed first): a Retry-After hint that is no date (Invalid Date) leaves the computed wait; never a NaN timer', async () => {
    // Node runs a NaN timer after 1 ms: a throttled client's waits all but vanished.
    const retries = abortableRetries(10, longest);
    const first = await retries.acquireInitialRetryToken();
    const hints = [new Date(Number.NaN), new Date('Fri, 31 Foo 2099')];
    for (const retryAfterHint of hints) {
      const timer = jest.spyOn(globalThis, 'setTimeout');
      const stop = new AbortController();
      const waiting = withRequestSignal(stop.signal, () =>
        retries.refreshRetryTokenForRetry(
          { ...first, getRetryCount: () => 4 },
          { errorType: 'THROTTLING', retryAfterHint },
        ),
      );
      // The 5th throttled retry's longest wait, 16 s, hint or none.
      const delays = timer.mock.calls.map((call) => call[1]);
      timer.mockRestore();
      stop.abort(new Error('closed'));
      expect(await outcomeWithin(waiting, 5_000)).toEqual({ error: new Error('closed') });
      expect(delays).toEqual([16_000]);
    }
  });
});
