/**
 * Review 124: a publisher observer that re-enters the Kafka publisher from inside its event: it
 * calls the publisher's close() synchronously in `published` (an application that shuts down on
 * its first publish). Expected: close() settles, no unhandled rejection, the batch the broker
 * confirmed stays SENT (the call that reported it answers as it would have), later calls are
 * retryable, and a new publisher sends the rest: every event on the topic exactly once.
 */
import { FERRY_HEADERS, createRelay, emitMany } from '@ferry/core';
import type { TransportPublisherEvent } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { readBack, silentLogger, testConnection, uniqueName } from './support';

failOnUnhandledRejections();

const connection = testConnection();
const topic = uniqueName('r124-publisher');
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(connection, [{ topic, partitions: 1 }]);
});
afterAll(async () => {
  await deleteTopics(connection, [topic]);
  await database.drop();
});

test('close() inside published: the confirmed batch stays SENT, close() settles, every event on the topic once', async () => {
  const { ids } = await emitMany(
    database.db,
    Array.from({ length: 9 }, (_, i) => ({ type: 'r124.publish', destination: topic, payload: { i } })),
  );
  const events: TransportPublisherEvent[] = [];
  let closing: Promise<void> | undefined;
  let publisher: KafkaPublisher | undefined = undefined;
  publisher = new KafkaPublisher(connection, {
    observer: (event) => {
      events.push(event);
      if (event.type === 'published' && closing === undefined) closing = publisher!.close();
    },
  });
  const relay = createRelay({ db: database.db, publisher, logger: silentLogger, options: { batchSize: 3 } });
  const first = await relay.runOnce();
  expect(first).toMatchObject({ claimed: 3, sent: 3 });
  expect(await outcomeWithin(closing!, 30_000)).toEqual({ value: undefined });
  const second = await relay.runOnce();
  expect(second).toMatchObject({ claimed: 3, sent: 0 });
  await relay.close();
  expect(events.filter((e) => e.type === 'published')).toEqual([expect.objectContaining({ count: 3 })]);

  const next = new KafkaPublisher(connection);
  const relay2 = createRelay({ db: database.db, publisher: next, logger: silentLogger });
  await database.db.execute(`UPDATE outbox_events SET next_attempt_at = now() WHERE status = 'PENDING'`);
  for (let i = 0; i < 5; i += 1) await relay2.runOnce();
  await relay2.close();
  await next.close();
  const rows = await database.db.query<{ status: string }>(`SELECT status FROM outbox_events`);
  expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'SENT'));
  const records = await readBack(connection, topic, ids.length);
  const seen = records.map((record) => record.headers[FERRY_HEADERS.messageId]);
  expect([...seen].sort()).toEqual([...ids].sort());
});
