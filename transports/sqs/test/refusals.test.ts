/**
 * SQS refusing a request's credentials or permissions (HTTP 403: InvalidClientTokenId,
 * SignatureDoesNotMatch, AccessDenied, ExpiredToken, UnrecognizedClientException) is a
 * configuration error, as RabbitMQ's 403 ACCESS_REFUSED is: the publisher reports `unavailable`
 * (the relay spends no attempt and opens its circuit), connect() says SQS refused (it did answer),
 * and the consumer's ready() rejects at once with FERRY_PERMANENT_FAILURE instead of waiting out its
 * timeout. ElasticMQ does not check credentials, so it cannot give this answer: these tests talk to
 * RefusingSqs (test/support/refusingSqs.ts), a local HTTP server that answers SQS's own 403.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { isFerryError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsConnection, SqsPublisher, attachSqsConsumer } from '@ferry/sqs';
import { deleteMessages } from '../src/deleteBatch';
import { neverAborted, outboxMessages, waitFor } from './support/sqs';
import { RefusingSqs } from './support/refusingSqs';

const AUTH_CODES = [
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'ExpiredToken',
  'UnrecognizedClientException',
];

describe.each(AUTH_CODES)('SQS answering 403 %s', (code) => {
  let sqs: RefusingSqs;
  let connection: SqsConnection;

  beforeAll(async () => {
    sqs = await RefusingSqs.start(code);
    connection = new SqsConnection({
      endpoint: sqs.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'wrong', secretAccessKey: 'wrong' },
      maxAttempts: 1,
    });
  });
  afterAll(async () => {
    await connection.close();
    await sqs.close();
  });

  it.each([
    ['a queue URL', () => sqs.queueUrl('orders')],
    ['a queue name (looked up first)', () => 'orders'],
  ])('publish() to %s reports unavailable, naming the code', async (_, queue) => {
    const messages = outboxMessages(2, queue());
    const outcomes = await new SqsPublisher(connection).publish(messages, neverAborted());
    expect(outcomes).toEqual(
      messages.map((m) => ({ id: m.id, status: 'unavailable', error: expect.stringContaining(code) })),
    );
  });

  it('connect() rejects with FERRY_PERMANENT_FAILURE saying SQS refused, not that it did not answer', async () => {
    const error = await connection.connect().then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(isFerryError(error, 'FERRY_PERMANENT_FAILURE')).toBe(true);
    expect((error as Error).message).toContain(code);
    expect((error as Error).message).toMatch(/refused/);
    expect((error as Error).message).not.toMatch(/did not answer/);
  });

  it('DeleteMessageBatch is not retried after a refusal: the next attempt would be refused too', async () => {
    const failures: unknown[] = [];
    const before = sqs.requests;
    const deleted = await deleteMessages(
      connection,
      sqs.queueUrl('orders'),
      [{ ReceiptHandle: 'r1' }],
      3,
      (error) => failures.push(error),
      neverAborted(),
    );
    expect(deleted).toEqual([]);
    expect(sqs.requests - before).toBe(1);
    expect(failures).toEqual([expect.objectContaining({ name: code })]);
  });

  it('the consumer: ready() rejects with the refusal long before its timeout; the consumer keeps trying', async () => {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(
      { maxPayloadBytes: 1024, acceptMany: async () => [] },
      {
        connection,
        queueUrl: sqs.queueUrl('orders'),
        consumer: 'c',
        deadLetter: { mode: 'queue', queueUrl: sqs.queueUrl('orders-dlq') },
        reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
        observer: (event) => events.push(event),
      },
    );
    try {
      await expect(consumer.ready({ timeoutMs: 600_000 })).rejects.toMatchObject({
        code: 'FERRY_PERMANENT_FAILURE',
        message: expect.stringContaining(code),
      });
      expect(events.filter((e) => e.type === 'connected')).toEqual([]);
      const before = sqs.requests;
      await waitFor('another attempt', () => (sqs.requests > before ? true : undefined));
    } finally {
      await consumer.close();
    }
  });
});
