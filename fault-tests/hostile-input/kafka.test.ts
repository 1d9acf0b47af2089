/**
 * Scenario hostile-input/kafka.
 *
 * Invariant: on a topic with ONE partition (so a record that stalled would hold up everything
 * behind it), valid records interleaved with one record of every hostile class a Kafka producer
 * can send, consumed by a fixed-tenant consumer (no identity fallback) into the real inbox.
 * Every valid record is accepted once and applied once; every hostile one is dead-lettered to
 * `<topic>.dlq` with its expected `x-ferry-reject-reason`; none is lost, none stuck; everything
 * settles within a bound after the last send. Not applicable: content types (Kafka has none).
 * Shared Kafka; unique topic and group names. Runs once per Kafka client (kafkajs, @platformatic/kafka).
 */
import { randomBytes } from 'node:crypto';
import type { Consumer, IHeaders } from 'kafkajs';
import { FERRY_HEADERS } from '@ferry/core';
import {
  KafkaConnection,
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type KafkaInboxConsumer,
} from '@ferry/kafka';
import pino from 'pino';
import type { TestDatabase } from '../../test-support/database';
import { openDatabase, startInbox } from '../broker-recovery/support';
import { settleAndAssert, type DeadLetterSeen } from './support';
import { CASE_HEADER, MAX_PAYLOAD_BYTES, TENANT, buildTraffic, type HostileClass } from './traffic';
import { faultSuite } from '../harness/scaffold';

jest.setTimeout(180_000);

const BROKERS = (process.env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const CLASSES: readonly HostileClass[] = [
  'nul_escape',
  'lone_surrogate',
  'invalid_utf8',
  'not_json',
  'json_scalar',
  'json_array',
  'empty_body',
  'tombstone',
  'oversize_body',
  'oversize_headers',
  'spoofed_tenant',
  'forged_attempts',
  'same_id_other_body',
  'no_identity',
  'deep_nesting',
];

function headerText(value: IHeaders[string]): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

describe.each(['kafkajs', 'platformatic'] as const)('hostile-input: kafka (%s client)', (client) => {
  let database: TestDatabase;
  let connection: KafkaConnection;
  const suite = faultSuite();

  beforeAll(async () => {
    database = await openDatabase();
    connection = new KafkaConnection({
      brokers: BROKERS,
      client,
      clientId: 'fault-hostile',
      kafkaLogLevel: 'nothing',
      logger: pino({ level: 'silent' }),
    });
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('dead-letters every hostile class with its reason and accepts every valid neighbour once, on one partition', async () => {
    const consumerName = 'hi_kafka';
    const suffix = randomBytes(4).toString('hex');
    const topic = `fault-hostile-${suffix}`;
    const groupId = `fault-hostile-group-${suffix}`;
    const readerGroup = `fault-hostile-reader-${suffix}`;
    await ensureTopics(connection, [{ topic, partitions: 1 }, { topic: `${topic}.dlq` }]);
    suite.defer(
      () => deleteTopics(connection, [topic, `${topic}.dlq`]),
      () => deleteGroups(connection, [groupId, readerGroup]),
    );
    const { inbox, counters } = await startInbox(database.prisma, consumerName, {
      maxPayloadBytes: MAX_PAYLOAD_BYTES,
    });
    suite.defer(() => inbox.close());
    const consumer: KafkaInboxConsumer = attachKafkaConsumer(inbox, {
      connection,
      topic,
      groupId,
      consumer: consumerName,
      tenant: { fixed: TENANT },
      fromBeginning: true,
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 300,
      maxWaitTimeMs: 200,
      retryBackoff: { initialMs: 50, maxMs: 400 },
    });
    suite.defer(() => consumer.close());
    await consumer.ready();

    const dead: DeadLetterSeen[] = [];
    const reader: Consumer = connection.kafka.consumer({ groupId: readerGroup, maxWaitTimeInMs: 100 });
    await reader.connect();
    suite.defer(() => reader.disconnect());
    await reader.subscribe({ topics: [`${topic}.dlq`], fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const headers = message.headers ?? {};
        dead.push({
          caseId: headerText(headers[CASE_HEADER]),
          reason: headerText(headers[FERRY_HEADERS.rejectReason]),
        });
      },
    });

    const traffic = buildTraffic(CLASSES);
    const producer = connection.kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    suite.defer(() => producer.disconnect());
    await producer.send({
      topic,
      messages: traffic.map((message) => ({
        value: message.body,
        headers: {
          ...message.headers,
          [CASE_HEADER]: message.caseId,
          ...(message.messageId === null ? {} : { [FERRY_HEADERS.messageId]: message.messageId }),
        },
      })),
    });

    await settleAndAssert('hostile-input/kafka', database.db, consumerName, traffic, counters, () =>
      Promise.resolve(dead),
    );
  });
});
