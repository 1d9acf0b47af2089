/**
 * Review 93: the relay gives up on a publish that does not answer after its publishTimeout, or
 * after the publisher's own longest answer (Publisher.answerWithinMs) and a margin when that is
 * longer (one lease.duration before review 118). A publisher whose deadline outlasts the lease answers `unavailable` for a silent broker
 * (no attempt spent); the relay waiting only one lease charged the batch (`retryable`) first.
 * One that declares a deadline and still never answers is given up on, and charged, all the same;
 * a declared value that is no positive finite number, or a getter that throws, counts as none.
 */
import { emitMany, type OutboxMessage, type Publisher, type PublishOutcome } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.query('DELETE FROM outbox_events');
});

const LEASE = { duration: 500, heartbeatInterval: 100 };

async function rows(ids: readonly string[]) {
  return t.db.query<{ status: string; retry_count: number; last_error: string | null }>(
    'SELECT status, retry_count, last_error FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY seq',
    [ids],
  );
}

/** Answers each message `unavailable` after `afterMs` (its own confirm deadline passing). */
function silentBroker(afterMs: number, answerWithinMs: unknown): Publisher {
  const publisher = {
    publish: (messages: readonly OutboxMessage[]) =>
      new Promise<readonly PublishOutcome[]>((resolve) =>
        setTimeout(
          () =>
            resolve(
              messages.map((m) => ({
                id: m.id,
                status: 'unavailable' as const,
                error: 'no confirm in time',
              })),
            ),
          afterMs,
        ),
      ),
  };
  Object.defineProperty(publisher, 'answerWithinMs', { get: () => answerWithinMs });
  return publisher as Publisher;
}

test('a publisher whose deadline outlasts the lease judges a silent broker: unavailable, no attempt spent', async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: { n: 0 } },
    { type: 'b', payload: { n: 1 }, orderingKey: 'k' },
  ]);
  const r = relay(t.db, silentBroker(1_500, 2_000), { lease: LEASE });
  try {
    const result = await r.runOnce();
    expect({ unavailable: result.unavailable, failed: result.failed }).toEqual({ unavailable: 2, failed: 0 });
  } finally {
    await r.close();
  }
  expect(await rows(ids)).toEqual([
    { status: 'PENDING', retry_count: 0, last_error: null },
    { status: 'PENDING', retry_count: 0, last_error: null },
  ]);
});

test('one that declares a deadline and never answers is given up on past it, and charged', async () => {
  const { ids } = await emitMany(t.db, [{ type: 'a', payload: { n: 0 } }]);
  const publisher: Publisher = { answerWithinMs: 700, publish: () => new Promise(() => undefined) };
  const r = relay(t.db, publisher, { lease: LEASE });
  try {
    await r.runOnce();
  } finally {
    await r.close();
  }
  expect(await rows(ids)).toEqual([
    { status: 'PENDING', retry_count: 1, last_error: expect.stringContaining('answerWithinMs') },
  ]);
});

test.each([
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['a negative number', -5_000],
  ['a string', '60000'],
  ['a getter that throws', 'throws'],
])('a declared %s counts as none: the relay waits its publishTimeout', async (_name, value) => {
  const { ids } = await emitMany(t.db, [{ type: 'a', payload: { n: 0 } }]);
  const publisher = { publish: () => new Promise<readonly PublishOutcome[]>(() => undefined) };
  Object.defineProperty(publisher, 'answerWithinMs', {
    get: () => {
      if (value === 'throws') throw new Error('hostile getter');
      return value;
    },
  });
  // A lease far beyond the publishTimeout: with LEASE's 500 ms a heartbeat late on a loaded CI run
  // lost the claim first (the row left PROCESSING, nothing to assert about the timeout).
  const lease = { duration: 5_000, heartbeatInterval: 1_000 };
  const r = relay(t.db, publisher as Publisher, { lease, publishTimeout: 500 });
  try {
    await r.runOnce();
  } finally {
    await r.close();
  }
  expect(await rows(ids)).toEqual([
    {
      status: 'PENDING',
      retry_count: 1,
      last_error: expect.stringContaining('within publishTimeout (500 ms)'),
    },
  ]);
});
