import { FerryError } from '@ferry/core';
import { AttachAttempts, awaitReady } from '@ferry/core/transport';

const never = new Promise<void>(() => undefined);
const refusal = () => new FerryError('FERRY_PERMANENT_FAILURE', 'refused: 403 (ACCESS-REFUSED)');
/** What ready() rejects with when nothing attaches within 1 ms. */
const timedOut = (attempts: AttachAttempts): Promise<unknown> =>
  awaitReady('c', never, new AbortController().signal, { timeoutMs: 1 }, attempts).catch(
    (rejection: unknown) => rejection,
  );

describe('awaitReady with AttachAttempts', () => {
  test('a refusal recorded before ready() rejects it at once with the refusal', async () => {
    const attempts = new AttachAttempts();
    const refused = refusal();
    attempts.refused(refused);
    await expect(
      awaitReady('c', never, new AbortController().signal, { timeoutMs: 60_000 }, attempts),
    ).rejects.toBe(refused);
  });

  test('a refusal while ready() waits rejects it with the refusal', async () => {
    const attempts = new AttachAttempts();
    const waiting = awaitReady('c', never, new AbortController().signal, { timeoutMs: 60_000 }, attempts);
    const refused = refusal();
    attempts.refused(refused);
    await expect(waiting).rejects.toBe(refused);
  });

  test('after the consumer attached, an earlier refusal no longer rejects ready()', async () => {
    const attempts = new AttachAttempts();
    attempts.refused(refusal());
    attempts.attached();
    await expect(
      awaitReady('c', Promise.resolve(), new AbortController().signal, {}, attempts),
    ).resolves.toBeUndefined();
  });

  test('the timeout names the last failed attempt and keeps it as its cause', async () => {
    const attempts = new AttachAttempts();
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    attempts.failed(cause);
    const error = await timedOut(attempts);
    expect(error).toMatchObject({ code: 'FERRY_TIMEOUT', cause });
    expect((error as Error).message).toMatch(
      /^c was not ready within 1 ms; the last attempt failed: .*ECONNREFUSED/,
    );
  });

  test('without a failed attempt the timeout is as before', async () => {
    await expect(
      awaitReady('c', never, new AbortController().signal, { timeoutMs: 1 }, new AttachAttempts()),
    ).rejects.toThrow(/^c was not ready within 1 ms$/);
  });

  // A refusal is only news while it is the latest word: the password fixed, the connection up,
  // the attach then failing on a missing queue, ready() rejected with the old 403 for good.
  test('a failed attempt after a refusal supersedes it: ready() is not rejected with the old refusal', async () => {
    const attempts = new AttachAttempts();
    attempts.refused(refusal());
    const cause = new Error('NOT_FOUND - no queue');
    attempts.failed(cause);
    const error = await timedOut(attempts);
    expect(error).toMatchObject({ code: 'FERRY_TIMEOUT', cause });
  });

  // ready() resolves once the consumer attached for the first time (as before refusals existed):
  // a refusal met by a later re-attach (the queue redeclared with other arguments) must not make
  // a caller of ready() after that (a second module, a restart of a component) fail for good.
  test('once attached, a refusal met by a later re-attach does not reject ready()', async () => {
    const attempts = new AttachAttempts();
    attempts.attached();
    attempts.refused(refusal());
    await expect(
      awaitReady('c', Promise.resolve(), new AbortController().signal, {}, attempts),
    ).resolves.toBeUndefined();
  });
});
