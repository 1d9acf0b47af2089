import { WaitTimeoutError, waitUntil } from '@ferry/testing';
import { liveTimers } from '../../../test-support/holds';

describe('waitUntil', () => {
  test('resolves with the first value that is not undefined, null or false', async () => {
    const answers = [undefined, null, false, 0];
    await expect(waitUntil('an answer', () => answers.shift(), { intervalMs: 1 })).resolves.toBe(0);
  });

  test('a probe that throws counts as not yet', async () => {
    let calls = 0;
    const probe = () => {
      calls += 1;
      if (calls < 3) throw new Error('refused');
      return 'up';
    };
    await expect(waitUntil('the broker', probe, { intervalMs: 1 })).resolves.toBe('up');
  });

  test('fails at the deadline with a WaitTimeoutError carrying the last answer', async () => {
    const waiting = waitUntil(
      'never',
      () => {
        throw new Error('still refused');
      },
      { timeoutMs: 20, intervalMs: 5 },
    );
    await expect(waiting).rejects.toBeInstanceOf(WaitTimeoutError);
    await expect(waiting).rejects.toMatchObject({
      last: expect.objectContaining({ message: 'still refused' }),
    });
  });
});

describe('waitUntil with a probe whose call never settles', () => {
  test('fails at the deadline naming what it waited for, and leaves no timer behind', async () => {
    const before = liveTimers();
    const hanging = new Promise<never>(() => undefined);
    let calls = 0;
    const error: unknown = await waitUntil(
      'the broker to answer',
      () => {
        calls += 1;
        return hanging;
      },
      { timeoutMs: 50, intervalMs: 1 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 50, unsettled: true });
    expect((error as Error).message).toBe(
      "timed out after 50 ms waiting for the broker to answer: the probe's call had not settled; last value: undefined",
    );
    expect(calls).toBe(1);
    expect(liveTimers()).toBeLessThanOrEqual(before);
  });

  test('a probe that settles late (after answering "not yet") is cut off at the deadline too', async () => {
    let calls = 0;
    const waiting = waitUntil(
      'a value',
      () => {
        calls += 1;
        return calls === 1 ? null : new Promise<never>(() => undefined);
      },
      { timeoutMs: 50, intervalMs: 1 },
    );
    await expect(waiting).rejects.toMatchObject({ unsettled: true, last: null });
  });

  test('a wait that succeeds leaves no timer behind', async () => {
    const before = liveTimers();
    let calls = 0;
    await expect(waitUntil('the third poll', () => ++calls >= 3, { timeoutMs: 60_000 })).resolves.toBe(true);
    expect(liveTimers()).toBeLessThanOrEqual(before);
  });
});
