import { WaitTimeoutError, waitUntil } from '@ferry/testing';

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
