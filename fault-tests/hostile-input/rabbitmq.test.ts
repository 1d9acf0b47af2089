/**
 * Scenario hostile-input/rabbitmq.
 *
 * Invariant: valid messages interleaved with one message of every hostile class a RabbitMQ
 * producer can send (all but the Kafka tombstone) on one work queue, consumed by a fixed-tenant
 * consumer into the real inbox. Every valid message is accepted once and applied once (the
 * forged attempt counter is a valid message too); every hostile one is dead-lettered with its
 * expected reason (`x-ferry-reject-reason`); none is lost, none stuck, none holds up the queue:
 * everything settles within a bound after the last publish. Shared RabbitMQ; unique queue names.
 */
import amqp from 'amqplib';
import { FERRY_HEADERS } from '@ferry/core';
import {
  RabbitConnection,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import pino from 'pino';
import type { TestDatabase } from '../../test-support/database';
import { openDatabase, startInbox } from '../broker-recovery/support';
import { settleAndAssert, type DeadLetterSeen } from './support';
import { CASE_HEADER, MAX_PAYLOAD_BYTES, TENANT, buildTraffic, type HostileClass } from './traffic';
import { bounded, faultSuite } from '../harness/scaffold';
import { AMQP_CONNECT_TIMEOUT_MS, AMQP_URL } from '../harness/brokers';

jest.setTimeout(180_000);

const CLASSES: readonly HostileClass[] = [
  'nul_escape',
  'lone_surrogate',
  'invalid_utf8',
  'not_json',
  'json_scalar',
  'json_array',
  'empty_body',
  'oversize_body',
  'unread_body',
  'oversize_headers',
  'spoofed_tenant',
  'forged_attempts',
  'same_id_other_body',
  'no_identity',
  'unsupported_content_type',
  'deep_nesting',
];

describe('hostile-input: rabbitmq', () => {
  let database: TestDatabase;
  let admin: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;
  const suite = faultSuite();

  beforeAll(async () => {
    database = await openDatabase();
    // Bounded: a FERRY_AMQP_URL that never answers fails here, naming the connect, not a hook timeout.
    admin = await amqp.connect(AMQP_URL, { timeout: AMQP_CONNECT_TIMEOUT_MS });
    channel = await admin.createConfirmChannel();
  });

  afterAll(async () => {
    // The database first: a refused FERRY_AMQP_URL leaves `admin` unset (review 34).
    await database?.drop();
    if (admin !== undefined) await bounded(admin.close());
  });

  it('dead-letters every hostile class with its reason and accepts every valid neighbour once', async () => {
    const consumerName = 'hi_rabbit';
    const queue = `fault.hostile.${Date.now().toString(36)}`;
    const { inbox, counters } = await startInbox(database.prisma, consumerName, {
      maxPayloadBytes: MAX_PAYLOAD_BYTES,
    });
    suite.defer(() => inbox.close());
    const connection = new RabbitConnection({ url: AMQP_URL, connectionName: 'fault-hostile' });
    suite.defer(() => connection.close());
    const consumer: RabbitConsumer = attachRabbitConsumer(inbox, {
      connection,
      queue,
      consumer: consumerName,
      tenant: { fixed: TENANT },
      retryBackoff: { initialMs: 100, maxMs: 400 },
      logger: pino({ level: 'silent' }),
    });
    suite.defer(async () => {
      await consumer.close();
      await deleteWorkQueue(channel, { queue, retryTiersMs: consumer.names.retryTiersMs });
    });
    await consumer.ready();

    const traffic = buildTraffic(CLASSES);
    for (const message of traffic) {
      channel.sendToQueue(queue, message.body ?? Buffer.alloc(0), {
        persistent: true,
        ...(message.contentType === null ? {} : { contentType: message.contentType }),
        headers: {
          ...message.headers,
          [CASE_HEADER]: message.caseId,
          ...(message.messageId === null ? {} : { [FERRY_HEADERS.messageId]: message.messageId }),
        },
      });
    }
    await channel.waitForConfirms();

    const dead: DeadLetterSeen[] = [];
    await settleAndAssert(
      'hostile-input/rabbitmq',
      database.db,
      consumerName,
      traffic,
      counters,
      async () => {
        for (;;) {
          const letter = await channel.get(`${queue}.dlq`, { noAck: true });
          if (letter === false) return dead;
          const headers = letter.properties.headers ?? {};
          dead.push({
            caseId: headerText(headers[CASE_HEADER]),
            // A body over maxBodyBytes was dropped unread: its copy says so, with an empty body.
            reason:
              headers['x-ferry-reject-body-bytes'] !== undefined && letter.content.length === 0
                ? `${headerText(headers[FERRY_HEADERS.rejectReason])} (body not read)`
                : headerText(headers[FERRY_HEADERS.rejectReason]),
          });
        }
      },
    );
  });
});

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}
