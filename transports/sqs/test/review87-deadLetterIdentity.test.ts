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
import { receiveAtLeast, uniqueName } from './support/sqs';
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
});
