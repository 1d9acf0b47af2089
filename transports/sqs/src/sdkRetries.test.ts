import { describe, expect, it } from '@jest/globals';
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
});
