/**
 * One destination the broker cannot take (an SQS queue the relay's role may not send to, a Kafka
 * topic whose partitions are offline) while every other destination is fine. Its events are
 * `unavailable`: handed back with no attempt spent, as they should be. They used to keep their
 * place at the head of the due order, so every claim took them first: with a batch's worth of
 * them due, every cycle was all-unavailable and the events of every other destination waited
 * for ever (failed first). Handed back, they now go behind the rows already due.
 */
import { createRelay, emitMany, type OutboxMessage } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent, statusOf, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('events of a destination that stays unavailable do not hold back those of the others', async () => {
  const down = await emitMany(
    t.db,
    Array.from({ length: 60 }, (_, i) => ({ type: 'down', destination: 'queue-down', payload: { i } })),
  );
  const up = await emitMany(
    t.db,
    Array.from({ length: 5 }, (_, i) => ({ type: 'up', destination: 'queue-up', payload: { i } })),
  );
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      message.destination === 'queue-down' ? { unavailable: 'AccessDenied on queue-down' } : 'sent',
  });
  const relay = createRelay({
    db: t.db,
    publisher,
    logger: silent,
    options: { batchSize: 10, pollInterval: 10, circuit: { failureThreshold: 1_000 } },
  });
  relay.start();
  try {
    await waitFor(async () => {
      const rows = await Promise.all(up.ids.map((id) => statusOf(t.db, id)));
      return rows.every((row) => row.status === 'SENT');
    }, 15_000);
  } finally {
    await relay.close();
  }
  // Nothing of the unavailable destination was spent or failed: held, PENDING, no retry counted.
  const rows = await t.db.query<{ status: string; retry_count: number }>(
    `SELECT status, retry_count FROM outbox_events WHERE id = ANY($1::uuid[])`,
    [down.ids],
  );
  expect(rows.every((row) => row.status === 'PENDING' && row.retry_count === 0)).toBe(true);
});
