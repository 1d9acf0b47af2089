/**
 * Review 140 (the outbox relay through KafkaPublisher against real broker answers): an event
 * without an ordering key (a record without a key) published to a compacted topic
 * (cleanup.policy=compact), which the broker refuses (INVALID_RECORD, "Compacted topic cannot
 * accept message without key"). It was `permanent` alone, its keyed neighbours sent, but the
 * reason it went FAILED with did not say why: on kafkajs only "This record has failed the
 * validation on broker (INVALID_RECORD)" (its Produce v7 answer carries no broker text), on
 * @platformatic/kafka "The server experienced an unexpected error (UNKNOWN_SERVER_ERROR)", the
 * stand-in the client makes of the broker's record error, named before the partition's own
 * INVALID_RECORD, with the broker's text left out.
 */
import { createRelay, emitMany, type OutboxEventInput } from '@ferry/core';
import { createTestDatabase } from '../../../test-support/database';
import { KafkaPublisher, deleteTopics, ensureTopics } from '../src';
import { outboxMessage, readBack, silentLogger, testConnection, uniqueName, waitFor } from './support';

const connection = testConnection();
const name = uniqueName('compacted-keyless');
const never = new AbortController().signal;

beforeAll(async () => {
  await ensureTopics(connection, [{ topic: name, configs: { 'cleanup.policy': 'compact' } }]);
});

afterAll(async () => {
  await deleteTopics(connection, [name]);
});

test('an event without a key to a compacted topic is permanent alone, with a reason naming the refusal; its neighbours are sent', async () => {
  const publisher = new KafkaPublisher(connection, { defaultDestination: name });
  const before = outboxMessage({ orderingKey: 'a' });
  const keyless = outboxMessage({ orderingKey: null });
  const after = outboxMessage({ orderingKey: 'b' });
  try {
    const outcomes = await publisher.publish([before, keyless, after], never);
    expect(outcomes.map((outcome) => [outcome.id, outcome.status])).toEqual([
      [before.id, 'sent'],
      [keyless.id, 'permanent'],
      [after.id, 'sent'],
    ]);
    const refused = outcomes[1]!;
    const reason = refused.status === 'permanent' ? refused.error : '';
    expect(reason).toContain('INVALID_RECORD');
    expect(reason).not.toContain('UNKNOWN_SERVER_ERROR');
    expect(reason).toContain('compacted topic');
    expect(reason).toContain('without a key');
  } finally {
    await publisher.close();
  }
  const records = await readBack(connection, name, 2);
  expect(records.map((record) => record.key)).toEqual(['a', 'b']);
});

test('through the relay: the keyless event is FAILED with that reason at its first attempt, every keyed event SENT in order', async () => {
  const topic = uniqueName('compacted-relay');
  await ensureTopics(connection, [{ topic, partitions: 2, configs: { 'cleanup.policy': 'compact' } }]);
  const database = await createTestDatabase();
  const publisher = new KafkaPublisher(connection);
  const relay = createRelay({ db: database.db, publisher, logger: silentLogger });
  try {
    const events: OutboxEventInput[] = [];
    for (let seq = 0; seq < 3; seq += 1) {
      for (const key of ['k1', 'k2', null])
        events.push({ type: 'order.updated', destination: topic, orderingKey: key, payload: { key, seq } });
    }
    await emitMany(database.db, events);
    const rows = () =>
      database.db.query<{
        ordering_key: string | null;
        status: string;
        retry_count: number;
        last_error: string | null;
      }>('SELECT ordering_key, status, retry_count, last_error FROM outbox_events ORDER BY seq');
    await waitFor(
      async () => {
        await relay.runOnce();
        return (await rows()).every((row) => row.status === 'SENT' || row.status === 'FAILED');
      },
      () => 'outbox events still PENDING',
    );
    const settled = await rows();
    expect(settled.filter((row) => row.ordering_key !== null).map((row) => row.status)).toEqual(
      Array(6).fill('SENT'),
    );
    const keyless = settled.filter((row) => row.ordering_key === null);
    expect(keyless.map((row) => [row.status, row.retry_count])).toEqual(Array(3).fill(['FAILED', 1]));
    for (const row of keyless) expect(row.last_error).toContain('refuses a record without a key');
    const records = await readBack(connection, topic, 6);
    for (const key of ['k1', 'k2'])
      expect(
        records
          .filter((record) => record.key === key)
          .map((record) => (JSON.parse(record.value!) as { seq: number }).seq),
      ).toEqual([0, 1, 2]);
  } finally {
    await relay.close();
    await publisher.close();
    await deleteTopics(connection, [topic]);
    await database.drop();
  }
});
