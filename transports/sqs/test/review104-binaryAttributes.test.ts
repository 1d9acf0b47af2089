/**
 * Attributes as the Java SDK, boto3 or the AWS CLI send them: any type, Binary ones included. A
 * Binary attribute whose bytes are UTF-8 text is a header as a String one is (as Kafka and
 * RabbitMQ header bytes are), and an `x-ferry-headers` sent as Binary (the JSON's bytes) is
 * unpacked: they were dropped, losing a correlation id, a trace context and the event's headers.
 * Bytes that are not UTF-8 are still left out, their message accepted without them.
 */
import { describe, expect, it } from '@jest/globals';
import { SendMessageCommand, type MessageAttributeValue } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { uniqueName, waitFor } from './support/sqs';

const fixture = useSqsConsumerFixture();
const bytes = (value: string | number[], DataType = 'Binary'): MessageAttributeValue => ({
  DataType,
  BinaryValue: typeof value === 'string' ? Buffer.from(value) : Uint8Array.from(value),
});

describe('SQS consumer: Binary attributes as headers', () => {
  it('stores Binary attributes holding UTF-8 text and unpacks a Binary x-ferry-headers', async () => {
    const acceptor = await fixture.freshAcceptor();
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName('binattr') });
    await fixture.connection.client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: '{"n":1}',
        MessageAttributes: {
          [FERRY_HEADERS.messageId]: { DataType: 'String', StringValue: 'bin-1' },
          [FERRY_HEADERS.correlationId]: bytes('corr-7'),
          'x-ferry-headers': bytes('{"x-app":"packed"}'),
          'app.trace.Name': bytes('text bytes', 'Binary.utf8'),
          'app.not-text': bytes([0xff, 0x00]),
        },
      }),
    );
    const consumer = fixture.attach(acceptor, queueUrl);
    await consumer.ready();
    const [row] = await waitFor('stored', async () => {
      const rows = await acceptor.stored();
      return rows.length > 0 ? rows : undefined;
    });
    expect(row!.messageId).toBe('bin-1');
    expect(row!.headers).toEqual({
      [FERRY_HEADERS.messageId]: 'bin-1',
      [FERRY_HEADERS.correlationId]: 'corr-7',
      'x-app': 'packed',
      'app.trace.Name': 'text bytes',
    });
  });
});
