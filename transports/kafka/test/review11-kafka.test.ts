/**
 * Review of issue 11 on Kafka (real Kafka and PostgreSQL).
 *
 * 1. An event that `emit` accepts with its default limits must be accepted by a ferry consumer.
 *    emit allows 64 headers of the event's own; the publisher adds ferry's headers (message id,
 *    type, tenant, correlation / causation id, trace context), and acceptance counted every header
 *    of the delivery against its own limit of 64.
 * 2. A record the dead-letter topic cannot hold must not stall its partition. sendDeadLetters
 *    falls back to the record's key and ferry's headers; a key larger than the dead-letter topic's
 *    max.message.bytes was refused even then (MESSAGE_TOO_LARGE), and the chunk was retried
 *    forever, so nothing behind the record was ever committed.
 */
import { DEFAULT_ENVELOPE_LIMITS, FERRY_HEADERS, INBOX_TABLE, Inbox, validateEnvelope } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  KafkaPublisher,
  REJECT_REASONS,
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
} from '../src';
import { VALUE_DROPPED_HEADER } from '../src/deadLetter';
import {
  committedOffsets,
  fastGroup,
  outboxMessage,
  readBack,
  testConnection,
  uniqueName,
  waitFor,
} from './support';

const connection = testConnection();
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

test('an event with as many headers as emit allows, published by ferry, is accepted by a ferry consumer (not dead-lettered as headers_too_large)', async () => {
  const topic = uniqueName('r11-headers');
  const groupId = uniqueName('r11-headers-group');
  await ensureTopics(connection, [{ topic }, { topic: `${topic}.dlq` }]);
  const headers = Object.fromEntries(
    Array.from({ length: DEFAULT_ENVELOPE_LIMITS.maxHeaders }, (_, i) => [`h${i}`, 'v']),
  );
  // emit accepts it with its default limits.
  expect(() =>
    validateEnvelope({ type: 'order.placed', payload: { n: 1 }, headers }, DEFAULT_ENVELOPE_LIMITS, 5),
  ).not.toThrow();
  const publisher = new KafkaPublisher(connection, { defaultDestination: topic });
  const events: TransportConsumerEvent[] = [];
  const consumer = attachKafkaConsumer(new Inbox(database.prisma), {
    connection,
    topic,
    groupId,
    consumer: 'r11-headers',
    ...fastGroup,
    maxWaitTimeMs: 200,
    observer: (event) => events.push(event),
  });
  try {
    await consumer.ready();
    const message = outboxMessage({ tenantId: 'tenant-a', correlationId: 'c-1', headers });
    const [outcome] = await publisher.publish([message], new AbortController().signal);
    expect(outcome?.status).toBe('sent');
    await waitFor(
      async () => (await committedOffsets(connection, groupId, topic)).get(0) === '1',
      () => 'the group did not commit the record',
    );
    const rows = await database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'r11-headers'`,
    );
    expect({
      stored: rows.map((row) => row.message_id),
      deadLettered: events.filter((event) => event.type === 'dead-lettered'),
    }).toEqual({ stored: [message.id], deadLettered: [] });
    expect(FERRY_HEADERS.messageId in headers).toBe(false);
  } finally {
    await consumer.close();
    await publisher.close();
    await deleteGroups(connection, [groupId]);
    await deleteTopics(connection, [topic, `${topic}.dlq`]);
  }
});

test('a hostile record whose key is larger than the dead-letter topic takes is dead-lettered without it, and its neighbours are committed', async () => {
  const topic = uniqueName('r11-dlq-key');
  const groupId = uniqueName('r11-dlq-key-group');
  const dlq = `${topic}.dlq`;
  await ensureTopics(connection, [{ topic }, { topic: dlq, configs: { 'max.message.bytes': '4096' } }]);
  const raw = connection.kafka.producer({ allowAutoTopicCreation: false });
  await raw.connect();
  const consumer = attachKafkaConsumer(new Inbox(database.prisma), {
    connection,
    topic,
    groupId,
    consumer: 'r11-dlq-key',
    ...fastGroup,
    maxWaitTimeMs: 200,
    retryBackoff: { initialMs: 50, maxMs: 200, multiplier: 2 },
  });
  try {
    await consumer.ready();
    const headers = (id: string) => ({ [FERRY_HEADERS.messageId]: id, [FERRY_HEADERS.tenantId]: 'tenant-a' });
    await raw.send({
      topic,
      messages: [
        { value: '{"n":0}', headers: headers('before') },
        { key: 'k'.repeat(8_000), value: 'not json', headers: headers('hostile') },
        { value: '{"n":2}', headers: headers('after') },
      ],
    });
    await waitFor(
      async () => (await committedOffsets(connection, groupId, topic)).get(0) === '3',
      () => 'the partition stalled behind the record with the large key',
    );
    const rows = await database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'r11-dlq-key' ORDER BY message_id`,
    );
    expect(rows.map((row) => row.message_id)).toEqual(['after', 'before']);
    const [dead] = await readBack(connection, dlq, 1);
    expect(dead!.headers[FERRY_HEADERS.rejectReason]).toBe(REJECT_REASONS.unparseableBody);
    expect(dead!.headers[VALUE_DROPPED_HEADER]).toBeDefined();
  } finally {
    await consumer.close();
    await raw.disconnect();
    await deleteGroups(connection, [groupId]);
    await deleteTopics(connection, [topic, dlq]);
  }
});
