/**
 * Review finding (failed first), review 87. A dead-letter copy carries as `x-ferry-message-id` the
 * identity the consumer used when the message had none (review 84: its SQS MessageId), so copies
 * of one message are one receipt once the dead-letter queue is drained. "Had none" was read as
 * "has an attribute of that name", but the consumer reads an empty one as none (readFerryHeaders)
 * and uses the MessageId. SQS refuses an empty String attribute; ElasticMQ takes an empty Binary one.
 * What the user sees: such a message is dead-lettered without the identity the consumer used.
 * What should happen: the copy carries it (the original MessageId), as without the attribute.
 */
import { describe, expect, it } from '@jest/globals';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { attachSqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import { receiveAtLeast, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('review87: dead-letter identity of a message whose x-ferry-message-id is empty', () => {
  const f = useSqsConsumerFixture();

  it('gives the copy the SQS MessageId the consumer used', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('r87-dlid') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('r87-dlid-dead') });
    const sent = await f.connection.client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: 'not json',
        MessageAttributes: {
          [FERRY_HEADERS.messageId]: { DataType: 'Binary', BinaryValue: new Uint8Array(0) },
        },
      }),
    );
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(consumer);
    await consumer.ready();
    const [copy] = await receiveAtLeast(f.connection, deadUrl, 1);
    expect(copy?.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).toBe(sent.MessageId);
  });

  // Review 87: a body nested past the inbox's 64 levels is refused unparsed (V8's JSON.parse of
  // nested arrays costs about ten times a flat body of the same size).
  it('dead-letters a body nested past 64 levels payload_too_deep unparsed, and takes one of 64', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declareBare({ name: uniqueName('r87-deep') });
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('r87-deep-dead') });
    const deep = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    await sendRaw(f.connection, queueUrl, deep(65), { [FERRY_HEADERS.messageId]: 'deep-65' });
    await sendRaw(f.connection, queueUrl, deep(64), { [FERRY_HEADERS.messageId]: 'deep-64' });
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl,
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      logger: pino({ level: 'silent' }),
    });
    f.consumers.push(consumer);
    await consumer.ready();
    const [copy] = await receiveAtLeast(f.connection, deadUrl, 1);
    const attributes = copy?.MessageAttributes ?? {};
    expect([
      attributes[FERRY_HEADERS.messageId]?.StringValue,
      attributes[FERRY_HEADERS.rejectReason]?.StringValue,
      attributes['x-ferry-reject-detail']?.StringValue,
    ]).toEqual(['deep-65', 'payload_too_deep', expect.stringMatching(/^body nests deeper than 64 levels/)]);
    await waitFor('deep-64 stored', async () =>
      (await acceptor.storedIds()).includes('deep-64') ? true : undefined,
    );
  });
});
