/**
 * The dead-letter copy of an invalid message holds only text SQS takes. A body SQS took may
 * still decode to text SQS refuses: JSON escapes (`\uffff`) are plain ASCII on the wire, and
 * the reason the inbox gives quotes the payload's key. The copy's reject detail then held
 * U+FFFF, SQS (ElasticMQ) refused the whole dead-letter request, and the message, with every
 * other invalid one of its batch, was never dead-lettered nor deleted: it came back for ever.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS, Inbox } from '@ferry/core';
import { attachSqsConsumer, type SqsConnection, type SqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { TestQueues, openConnection, receiveAtLeast, uniqueName } from './support/sqs';

describe('SQS consumer: dead-letter copies SQS takes', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;
  let consumer: SqsConsumer | null = null;

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = openConnection();
    queues = new TestQueues(connection);
  });

  afterAll(async () => {
    await consumer?.close();
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  it('dead-letters a message whose reject detail holds U+FFFF, and its neighbours', async () => {
    const inbox = new Inbox(database.prisma);
    await inbox.initialize();
    const { queueUrl } = await queues.declare({ name: uniqueName('dltext') });
    const { queueUrl: deadUrl } = await queues.declareBare({ name: uniqueName('dltext-dead') });
    const send = (body: string, id: string) =>
      connection.client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          MessageAttributes: { [FERRY_HEADERS.messageId]: { DataType: 'String', StringValue: id } },
        }),
      );
    // ASCII on the wire; parsed, a key U+FFFF (or a lone surrogate) over a value holding NUL.
    await send(String.raw`{"k\uffff":"\u0000"}`, 'ffff');
    await send(String.raw`{"k\ud800":"\u0000"}`, 'surrogate');
    await send('not json', 'neighbour');

    consumer = attachSqsConsumer(inbox, {
      connection,
      queueUrl,
      consumer: 'orders',
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    await consumer.ready();

    const dead = await receiveAtLeast(connection, deadUrl, 3);
    const ids = dead.map((m) => m.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).sort();
    expect(ids).toEqual(['ffff', 'neighbour', 'surrogate']);
    const details = dead.map((m) => m.MessageAttributes?.['x-ferry-reject-detail']?.StringValue ?? '');
    for (const detail of details) expect(detail).not.toMatch(/[\uffff\ufffe]/);
  });
});
