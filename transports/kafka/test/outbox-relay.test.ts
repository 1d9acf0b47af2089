/**
 * The outbox of @ferry/core relayed to Kafka: events emitted in PostgreSQL (createTestDatabase,
 * migrated), the real relay (createRelay) publishing through KafkaPublisher to a 3-partition
 * topic, read back by an independent consumer group.
 */
import { FERRY_HEADERS, createRelay, emitMany, type OutboxEventInput, type Relay } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { readBack, silentLogger, testConnection, uniqueName, waitFor } from './support';

const connection = testConnection();
const topic = uniqueName('relay');
let database: TestDatabase;
let publisher: KafkaPublisher;
let relay: Relay | null = null;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(connection, [{ topic, partitions: 3 }]);
  publisher = new KafkaPublisher(connection);
});

afterAll(async () => {
  await relay?.close();
  await publisher.close();
  await deleteTopics(connection, [topic]);
  await database.drop();
});

test('relays every emitted event to Kafka and marks it SENT, keeping per-key order across 3 partitions', async () => {
  const keys = Array.from({ length: 10 }, (_, index) => `customer-${index}`);
  const events: OutboxEventInput[] = [];
  for (let seq = 0; seq < 8; seq += 1) {
    for (const key of keys)
      events.push({ type: 'order.updated', destination: topic, orderingKey: key, payload: { key, seq } });
  }
  const { ids } = await emitMany(database.db, events);
  relay = createRelay({ db: database.db, publisher, logger: silentLogger });

  const pending = async () => {
    const rows = await database.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
    );
    return rows[0]?.n ?? 0;
  };
  await waitFor(
    async () => {
      await relay!.runOnce();
      return (await pending()) === 0;
    },
    () => 'outbox events not yet SENT',
  );

  const records = await readBack(connection, topic, ids.length);
  const received = records.map((record) => record.headers[FERRY_HEADERS.messageId]);
  expect({
    missing: ids.filter((id) => !received.includes(id)),
    extra: received.filter((id) => !ids.includes(id!)),
  }).toEqual({
    missing: [],
    extra: [],
  });
  const lastSeq = new Map<string, number>();
  for (const record of records) {
    const { key, seq } = JSON.parse(record.value!) as { key: string; seq: number };
    expect(seq).toBe((lastSeq.get(key) ?? -1) + 1);
    lastSeq.set(key, seq);
  }
  expect(new Set(records.map((record) => record.partition)).size).toBe(3);
});

test('a started relay (pipelined cycles) puts every event it marked SENT into the topic', async () => {
  const pipelined = uniqueName('relay-pipelined');
  await ensureTopics(connection, [{ topic: pipelined, partitions: 3 }]);
  const pipelinedPublisher = new KafkaPublisher(connection);
  const events: OutboxEventInput[] = Array.from({ length: 400 }, (_, index) => ({
    type: 'order.created',
    destination: pipelined,
    payload: { index },
  }));
  const { ids } = await emitMany(database.db, events);
  const started = createRelay({
    db: database.db,
    publisher: pipelinedPublisher,
    logger: silentLogger,
    options: { batchSize: 50, pipelineDepth: 2 },
  });
  try {
    started.start();
    await waitFor(
      async () => {
        const rows = await database.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1::uuid[]) AND status = 'SENT'`,
          [ids],
        );
        return rows[0]?.n === ids.length;
      },
      () => 'pipelined events not yet SENT',
    );
  } finally {
    await started.close();
    await pipelinedPublisher.close();
  }
  const retried = await database.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1::uuid[]) AND retry_count > 0`,
    [ids],
  );
  const records = await readBack(connection, pipelined, ids.length).finally(() =>
    deleteTopics(connection, [pipelined]),
  );
  const received = new Set(records.map((record) => record.headers[FERRY_HEADERS.messageId]));
  expect({ missing: ids.filter((id) => !received.has(id)).length, retried: retried[0]?.n }).toEqual({
    missing: 0,
    retried: 0,
  });
});
