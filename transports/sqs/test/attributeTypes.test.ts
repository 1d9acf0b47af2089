/**
 * ferry's attributes as other producers send them: SQS message attributes have a type, and a
 * producer may send `x-ferry-message-id` or `x-ferry-tenant-id` as Binary (bytes) or Number.
 * Bytes that are UTF-8 are read as the text they hold, as the Kafka and RabbitMQ consumers read
 * bytes; bytes that are not are dead-lettered as invalid_text. Never is such an attribute ignored,
 * which took the SQS MessageId as the identity (a producer's resend applied twice) and put a
 * tenant sent as bytes in the global scope.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SendMessageCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { attachSqsConsumer, type SqsConnection, type SqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { TestQueues, openConnection, receiveAtLeast, uniqueName, waitFor } from './support/sqs';

const ID = FERRY_HEADERS.messageId;
const TENANT = FERRY_HEADERS.tenantId;
const binary = (bytes: number[] | string): MessageAttributeValue => ({
  DataType: 'Binary',
  BinaryValue: typeof bytes === 'string' ? Buffer.from(bytes) : Uint8Array.from(bytes),
});
const text = (value: string, DataType = 'String'): MessageAttributeValue => ({
  DataType,
  StringValue: value,
});

describe('SQS consumer: ferry attributes of every attribute type', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;
  let consumer: SqsConsumer | null = null;

  beforeAll(async () => {
    database = await createTestDatabase({ migrate: false });
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await consumer?.close();
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  it('reads Binary ferry attributes that are UTF-8 and Number ones; dead-letters Binary ones that are not UTF-8', async () => {
    const acceptor = await PgTestAcceptor.create(database.db);
    const { queueUrl } = await queues.declare({ name: uniqueName('types') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('types-dead') });
    const send = (body: string, attributes: Record<string, MessageAttributeValue>) =>
      connection.client.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, MessageAttributes: attributes }),
      );
    await send('{"n":1}', { [ID]: binary('binary-id'), [TENANT]: binary('acme') });
    await send('{"n":2}', { [ID]: text('42', 'Number'), [TENANT]: text('acme', 'String.tenant') });
    await send('{"n":3}', { [ID]: binary([0xff, 0x61]), [TENANT]: text('acme') });
    await send('{"n":4}', { [ID]: text('bad-tenant'), [TENANT]: binary([0xfe, 0x61]) });

    consumer = attachSqsConsumer(acceptor, {
      connection,
      queueUrl,
      consumer: 'orders',
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    await consumer.ready();

    const dead = await receiveAtLeast(connection, deadUrl, 2);
    const deadBodies = dead
      .map((m) => [m.Body, m.MessageAttributes?.[FERRY_HEADERS.rejectReason]?.StringValue])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(deadBodies).toEqual([
      ['{"n":3}', 'invalid_text'],
      ['{"n":4}', 'invalid_text'],
    ]);
    const stored = await waitFor('two stored', async () => {
      const rows = await acceptor.stored();
      return rows.length >= 2 ? rows : undefined;
    });
    expect(stored.map((row) => [row.messageId, row.tenantId]).sort()).toEqual([
      ['42', 'acme'],
      ['binary-id', 'acme'],
    ]);
  });
});
