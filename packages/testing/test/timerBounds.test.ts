/**
 * Every wait of @ferry/testing races its calls against a timer (core's deadlineSignal, a
 * setTimeout): a timeoutMs or intervalMs over 2^31-1 ms, which Node would clamp to 1 ms (the
 * wait over at once), is refused with FERRY_CONFIG_INVALID; 2^31-1 itself is taken.
 */
import { describe, expect, it } from '@jest/globals';
import { MAX_TIMER_MS } from '@ferry/core/transport';
import { drainInbox, waitForInboxRecord, waitUntil } from '@ferry/testing';

const OVER = MAX_TIMER_MS + 1;
const done = {
  runOnce: async () => ({ claimed: 0, completed: 0, retried: 0, dead: 0, leaseLost: 0, unresolved: 0 }),
};
const found = { get: async () => ({ status: 'COMPLETED' }) } as unknown as Parameters<
  typeof waitForInboxRecord
>[0];

describe('@ferry/testing waits with a timeout over the timer limit', () => {
  it.each<[string, () => Promise<unknown>]>([
    ['waitUntil timeoutMs', () => waitUntil('x', () => 'done', { timeoutMs: OVER })],
    ['waitUntil intervalMs', () => waitUntil('x', () => 'done', { intervalMs: OVER })],
    ['drainInbox timeoutMs', () => drainInbox(done, { timeoutMs: OVER })],
    ['waitForInboxRecord timeoutMs', () => waitForInboxRecord(found, 'id', { timeoutMs: OVER })],
    ['waitForInboxRecord intervalMs', () => waitForInboxRecord(found, 'id', { intervalMs: OVER })],
  ])('%s of 2^31 is refused (FERRY_CONFIG_INVALID)', async (_, wait) => {
    await expect(Promise.resolve().then<unknown>(wait)).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      message: expect.stringContaining('2147483647'),
    });
  });

  it('waitUntil({ timeoutMs: 2^31-1 }) waits for a probe that answers on its third call', async () => {
    let calls = 0;
    const probe = async () => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return calls >= 3 ? 'done' : undefined;
    };
    await expect(
      waitUntil('the third call', probe, { timeoutMs: MAX_TIMER_MS, intervalMs: 10 }),
    ).resolves.toBe('done');
  });

  it('drainInbox and waitForInboxRecord take a timeoutMs of 2^31-1', async () => {
    await expect(drainInbox(done, { timeoutMs: MAX_TIMER_MS })).resolves.toMatchObject({
      rounds: expect.any(Number),
    });
    await expect(waitForInboxRecord(found, 'id', { timeoutMs: MAX_TIMER_MS })).resolves.toMatchObject({
      status: 'COMPLETED',
    });
  });
});
