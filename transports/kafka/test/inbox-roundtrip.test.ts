/**
 * The round trip against the real inbox of @ferry/core: outbox messages → Kafka (3 partitions)
 * → Inbox.acceptMany (ferry's receipts table, migrated by createTestDatabase), with duplicates
 * published on purpose.
 */
import { INBOX_TABLE, Inbox } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  KafkaPublisher,
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type KafkaInboxConsumer,
} from '../src';
import {
  committedOffsets,
  endOffsets,
  fastGroup,
  outboxMessage,
  testConnection,
  uniqueName,
  waitFor,
} from './support';

const connection = testConnection();
const topic = uniqueName('inbox-rt');
const groupId = uniqueName('inbox-rt-group');
let database: TestDatabase;
let publisher: KafkaPublisher;
let consumer: KafkaInboxConsumer | null = null;

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureTopics(connection, [{ topic, partitions: 3 }, { topic: `${topic}.dlq` }]);
  publisher = new KafkaPublisher(connection, { defaultTopic: topic });
});

afterAll(async () => {
  await consumer?.close();
  await publisher.close();
  await deleteGroups(connection, [groupId]);
  await deleteTopics(connection, [topic, `${topic}.dlq`]);
  await database.drop();
});

test('stores one inbox receipt per event although duplicates were published, and commits every partition to its end', async () => {
  const inbox = new Inbox(database.prisma);
  consumer = await attachKafkaConsumer(inbox, {
    connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
  });
  await consumer.ready();
  const messages = Array.from({ length: 40 }, (_, index) =>
    outboxMessage({ tenantId: 'tenant-a', orderingKey: `k${index % 8}`, payload: { index } }),
  );
  const outcomes = [
    ...(await publisher.publish(messages, new AbortController().signal)),
    ...(await publisher.publish(messages.slice(0, 15), new AbortController().signal)),
  ];
  expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);

  await waitFor(
    async () => {
      const [committed, end] = await Promise.all([
        committedOffsets(connection, groupId, topic),
        endOffsets(connection, topic),
      ]);
      return [...end].every(([partition, high]) => committed.get(partition) === high);
    },
    () => 'the group did not commit to the end offsets',
  );
  const rows = await database.db.query<{ message_id: string; n: number }>(
    `SELECT message_id, count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'billing' GROUP BY message_id`,
  );
  const stored = new Map(rows.map((row) => [row.message_id, row.n]));
  expect({
    missing: messages.map((message) => message.id).filter((id) => !stored.has(id)),
    extra: rows.filter((row) => row.n > 1 || !messages.some((message) => message.id === row.message_id)),
  }).toEqual({ missing: [], extra: [] });
});
