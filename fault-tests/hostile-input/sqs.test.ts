/**
 * Scenario hostile-input/sqs.
 *
 * Invariant: valid messages interleaved with one message of every hostile class an SQS sender
 * can send, consumed by a fixed-tenant consumer (dead-letter mode `queue`, no identity fallback)
 * into the real inbox. Every valid message is accepted once and applied once; every hostile one
 * is copied to the dead-letter queue with its expected `x-ferry-reject-reason`; none is lost,
 * none stuck; everything settles within a bound after the last send. Not applicable to SQS:
 * invalid UTF-8 and an empty body (SQS refuses both at send), tombstones (Kafka), content types
 * (SQS has none). Shared ElasticMQ; unique queue names.
 */
import { ReceiveMessageCommand, SendMessageCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { SqsConnection, attachSqsConsumer, declareQueue, deleteQueue, type SqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import type { TestDatabase } from '../../test-support/database';
import { openDatabase, startInbox } from '../broker-recovery/support';
import { settleAndAssert, type DeadLetterSeen } from './support';
import {
  CASE_HEADER,
  MAX_PAYLOAD_BYTES,
  TENANT,
  buildTraffic,
  type HostileClass,
  type WireMessage,
} from './traffic';
import { bounded, faultSuite } from '../harness/scaffold';

jest.setTimeout(180_000);

const ENDPOINT = process.env.FERRY_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';
const CLASSES: readonly HostileClass[] = [
  'nul_escape',
  'lone_surrogate',
  'not_json',
  'json_scalar',
  'json_array',
  'oversize_body',
  'oversize_headers',
  'spoofed_tenant',
  'forged_attempts',
  'same_id_other_body',
  'no_identity',
  'deep_nesting',
];

/** ferry's wire: headers other than ferry's own travel packed in one `x-ferry-headers` attribute. */
function attributesOf(message: WireMessage): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [CASE_HEADER]: { DataType: 'String', StringValue: message.caseId },
  };
  if (message.messageId !== null) {
    attributes[FERRY_HEADERS.messageId] = { DataType: 'String', StringValue: message.messageId };
  }
  const packed: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (name.startsWith('x-ferry-')) attributes[name] = { DataType: 'String', StringValue: value };
    else packed[name] = value;
  }
  if (Object.keys(packed).length > 0) {
    attributes['x-ferry-headers'] = { DataType: 'String', StringValue: JSON.stringify(packed) };
  }
  return attributes;
}

describe('hostile-input: sqs', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  const suite = faultSuite();

  beforeAll(async () => {
    database = await openDatabase();
    connection = new SqsConnection({
      endpoint: ENDPOINT,
      region: 'us-east-1',
      credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    });
  });

  afterAll(async () => {
    await bounded(connection.close());
    await database?.drop();
  });

  it('dead-letters every hostile class with its reason and accepts every valid neighbour once', async () => {
    const consumerName = 'hi_sqs';
    const name = `fault-hostile-${Date.now().toString(36)}`;
    const { queueUrl } = await declareQueue(connection, { name });
    const { queueUrl: deadUrl } = await declareQueue(connection, { name: `${name}-dead` });
    suite.defer(
      () => deleteQueue(connection, queueUrl),
      () => deleteQueue(connection, deadUrl),
    );
    const { inbox, counters } = await startInbox(database.prisma, consumerName, {
      maxPayloadBytes: MAX_PAYLOAD_BYTES,
    });
    suite.defer(() => inbox.close());
    const consumer: SqsConsumer = attachSqsConsumer(inbox, {
      connection,
      queueUrl,
      consumer: consumerName,
      waitTimeSeconds: 1,
      identity: () => null,
      tenant: { fixed: TENANT },
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      retryBackoff: { initialMs: 1_000, maxMs: 1_000 },
      logger: pino({ level: 'silent' }),
    });
    suite.defer(() => consumer.close());
    await consumer.ready();

    const traffic = buildTraffic(CLASSES);
    for (const message of traffic) {
      await connection.client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: message.body!.toString('utf8'),
          MessageAttributes: attributesOf(message),
        }),
      );
    }

    const dead: DeadLetterSeen[] = [];
    await settleAndAssert('hostile-input/sqs', database.db, consumerName, traffic, counters, async () => {
      const output = await connection.client.send(
        new ReceiveMessageCommand({
          QueueUrl: deadUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 600,
          MessageAttributeNames: ['All'],
        }),
      );
      for (const letter of output.Messages ?? []) {
        dead.push({
          caseId: letter.MessageAttributes?.[CASE_HEADER]?.StringValue,
          reason: letter.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue,
        });
      }
      return dead;
    });
  });
});
