import {
  backoffDelay,
  inboxRetryCeilingMs,
  inboxRetryDelayMs,
  outboxRetryDelayMs,
  reconnectDelayMs,
  resolveBackoff,
} from './backoff';
import { MAX_TIMER_MS } from './optionChecks';

describe('backoff (one module for outbox, inbox, reconnects and transports)', () => {
  it('outbox exponential is min(maxDelay, initialDelay * 2^(retryCount - 1)) and fixed is initialDelay', () => {
    const retry = { backoff: 'exponential', initialDelay: 1_000, maxDelay: 86_400_000 } as const;
    expect([1, 2, 3, 4].map((n) => outboxRetryDelayMs(retry, n))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(outboxRetryDelayMs({ ...retry, maxDelay: 5_000 }, 4)).toBe(5_000);
    expect(outboxRetryDelayMs({ ...retry, initialDelay: 0 }, 5_000)).toBe(0);
    expect([1, 2, 9].map((n) => outboxRetryDelayMs({ ...retry, backoff: 'fixed' }, n))).toEqual([
      1_000, 1_000, 1_000,
    ]);
  });

  it('inbox is capped exponential with full jitter drawn from the injected random source', () => {
    expect([1, 2, 3, 4, 2_000].map((a) => inboxRetryCeilingMs(a, 1_000, 5_000))).toEqual([
      1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
    expect(inboxRetryDelayMs(3, 1_000, 300_000, () => 0)).toBe(0);
    expect(inboxRetryDelayMs(3, 1_000, 300_000, () => 0.25)).toBe(1_000);
    expect(inboxRetryDelayMs(3, 1_000, 300_000, () => 1)).toBe(4_000);
  });

  it('reconnect delays double from the initial delay up to the cap', () => {
    expect([0, 1, 2, 10, 5_000].map((f) => reconnectDelayMs(500, 30_000, f))).toEqual([
      500, 1_000, 2_000, 30_000, 30_000,
    ]);
  });

  it('a policy never returns a negative delay or one above its cap, whatever the random source says', () => {
    const policy = { initialMs: 100, maxMs: 1_000, multiplier: 1.5, jitter: 'full' } as const;
    expect(backoffDelay(50, policy, () => 7)).toBe(1_000);
    // Outside [0, 1) is a hostile answer: the full ceiling, not the 0 ms of a hot retry loop.
    expect(backoffDelay(2, policy, () => -3)).toBe(150);
    expect(backoffDelay(2, policy, () => -Infinity)).toBe(150);
  });

  it('an async random source that rejects yields the full ceiling and leaves no unhandled rejection', async () => {
    const policy = { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 'full' } as const;
    const rejecting = (async () => {
      throw new Error('entropy unavailable');
    }) as unknown as () => number;
    expect(backoffDelay(1, policy, rejecting)).toBe(100);
    // Jest fails the test on an unhandled rejection, reported once the microtasks have drained.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  });
});

describe('resolveBackoff bounds', () => {
  const defaults = { initialMs: 100, maxMs: 10_000, multiplier: 2, jitter: 'none' } as const;

  it.each([
    ['reconnectBackoff.maxMs', { maxMs: MAX_TIMER_MS + 1 }],
    ['reconnectBackoff.initialMs', { initialMs: MAX_TIMER_MS + 1, maxMs: MAX_TIMER_MS + 1 }],
  ])('refuses %s over 2^31-1 (a longer delay fires after 1 ms: the loop would spin)', (name, given) => {
    expect(() => resolveBackoff('reconnectBackoff', given, defaults)).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', message: expect.stringContaining(name) }),
    );
  });

  it('takes maxMs of 2^31-1', () => {
    expect(resolveBackoff('reconnectBackoff', { maxMs: MAX_TIMER_MS }, defaults).maxMs).toBe(MAX_TIMER_MS);
  });
});
