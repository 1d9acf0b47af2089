/**
 * check() of every transport's consumer (checkAttached over the consumer's AttachAttempts): the
 * readiness probe of a consumer says whether it is attached now, not whether it attached once
 * (review 71: readiness through ready() stayed up for as long as a consumer had lost its broker).
 * ready() stays the start-up gate.
 */
import { ConsumerDisconnectedError, FerryError } from '@ferry/core';
import { AttachAttempts, awaitReady, checkAttached } from '@ferry/core/transport';

const WHAT = 'RabbitMQ consumer billing of queue orders';
const open = () => new AbortController().signal;
const refused = (error: unknown) => error;
const rejection = (checking: Promise<void>): Promise<unknown> => checking.then(() => 'resolved', refused);

describe('checkAttached', () => {
  test('before the first attach it rejects with ConsumerDisconnectedError naming the consumer', async () => {
    const error = await rejection(checkAttached(WHAT, open(), new AttachAttempts()));
    expect(error).toBeInstanceOf(ConsumerDisconnectedError);
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({
      code: 'FERRY_TRANSPORT_ERROR',
      retriable: true,
      consumer: WHAT,
      details: { consumer: WHAT },
    });
    expect((error as Error).message).toBe(`${WHAT} is not connected: it has not attached yet`);
  });

  test('names the last failed attempt, kept as its cause', async () => {
    const attempts = new AttachAttempts();
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    attempts.failed(cause);
    const error = await rejection(checkAttached(WHAT, open(), attempts));
    expect(error).toMatchObject({ cause, reason: expect.stringContaining('ECONNREFUSED') });
    expect((error as Error).message).toBe(
      `${WHAT} is not connected: it has not attached yet; the last attempt failed: connect ECONNREFUSED 127.0.0.1:1`,
    );
  });

  test('resolves while attached, rejects once the connection is lost, resolves again once re-attached', async () => {
    const attempts = new AttachAttempts();
    attempts.attached();
    await expect(checkAttached(WHAT, open(), attempts)).resolves.toBeUndefined();

    const lost = new Error('Connection closed: 320 (CONNECTION-FORCED)');
    attempts.lost(lost);
    const error = await rejection(checkAttached(WHAT, open(), attempts));
    expect(error).toBeInstanceOf(ConsumerDisconnectedError);
    expect(error).toMatchObject({ cause: lost });
    expect((error as Error).message).toBe(
      `${WHAT} is not connected: it lost its connection and has not re-attached; ` +
        'the last failure: Connection closed: 320 (CONNECTION-FORCED)',
    );

    // Each failed re-attach is the latest word.
    const refusedConnect = new Error('connect ECONNREFUSED 127.0.0.1:5672');
    attempts.failed(refusedConnect);
    await expect(checkAttached(WHAT, open(), attempts)).rejects.toMatchObject({ cause: refusedConnect });

    attempts.attached();
    await expect(checkAttached(WHAT, open(), attempts)).resolves.toBeUndefined();
  });

  test('names the channel when only the channel was lost, until the connection goes too or it re-attaches (review 130)', async () => {
    const attempts = new AttachAttempts();
    attempts.attached();
    attempts.lost(new Error('Channel closed by server: 406 (PRECONDITION-FAILED)'), 'channel');
    const channelLost = (await rejection(checkAttached(WHAT, open(), attempts))) as Error;
    expect(channelLost.message).toBe(
      `${WHAT} is not connected: it lost its channel (its connection is up) and has not re-attached; ` +
        'the last failure: Channel closed by server: 406 (PRECONDITION-FAILED)',
    );
    // A failed re-attach keeps what was lost.
    attempts.failed(new Error('404 (NOT-FOUND)'));
    expect(((await rejection(checkAttached(WHAT, open(), attempts))) as Error).message).toContain(
      'it lost its channel (its connection is up)',
    );
    attempts.lost(new Error('Connection closed: 320 (CONNECTION-FORCED)'), 'connection');
    expect(((await rejection(checkAttached(WHAT, open(), attempts))) as Error).message).toContain(
      'it lost its connection and has not re-attached',
    );
    // Attached again, a later loss says what it is again.
    attempts.attached();
    attempts.lost(new Error('socket closed'));
    expect(((await rejection(checkAttached(WHAT, open(), attempts))) as Error).message).toContain(
      'it lost its connection and has not re-attached',
    );
  });

  test('a failed or refused attempt after an attach means not attached (a re-attach in progress)', async () => {
    for (const fail of [
      (attempts: AttachAttempts) => attempts.failed(new Error('channel closed')),
      (attempts: AttachAttempts) =>
        attempts.refused(new FerryError('FERRY_PERMANENT_FAILURE', 'refused: 403 (ACCESS-REFUSED)')),
    ]) {
      const attempts = new AttachAttempts();
      attempts.attached();
      fail(attempts);
      await expect(checkAttached(WHAT, open(), attempts)).rejects.toBeInstanceOf(ConsumerDisconnectedError);
    }
  });

  test('rejects with FERRY_CLOSED once the consumer is closed, attached or not', async () => {
    const attempts = new AttachAttempts();
    attempts.attached();
    const closed = new AbortController();
    closed.abort();
    await expect(checkAttached(WHAT, closed.signal, attempts)).rejects.toMatchObject({
      code: 'FERRY_CLOSED',
      message: `${WHAT} is closed`,
    });
  });

  test('ready() stays the start-up gate: it resolves after a loss, check() is the probe', async () => {
    const attempts = new AttachAttempts();
    attempts.attached();
    attempts.lost(new Error('socket closed'));
    await expect(awaitReady(WHAT, Promise.resolve(), open(), {}, attempts)).resolves.toBeUndefined();
    await expect(checkAttached(WHAT, open(), attempts)).rejects.toBeInstanceOf(ConsumerDisconnectedError);
  });
});
