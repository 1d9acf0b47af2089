import { backoffDelay } from '@ferry/rabbitmq';

describe('backoffDelay', () => {
  const policy = { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 'none' as const };

  it('grows exponentially from the initial delay and never exceeds the cap', () => {
    expect([1, 2, 3, 4, 5, 50].map((attempt) => backoffDelay(attempt, policy))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
  });

  it('draws full jitter from the injected random source within [0, delay]', () => {
    const jittered = { ...policy, jitter: 'full' as const };
    expect(backoffDelay(3, jittered, () => 0)).toBe(0);
    expect(backoffDelay(3, jittered, () => 0.5)).toBe(200);
    expect(backoffDelay(3, jittered, () => 1)).toBe(400);
  });
});
