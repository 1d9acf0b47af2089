import type { InboxAcceptor } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import { attachKafkaConsumer, KafkaConnection } from '@ferry/kafka';
import { attachSqsConsumer, SqsConnection } from '@ferry/sqs';

/** An acceptor that knows one handler, `orders`, the way an Inbox with handlers does. */
const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
  assertHandles(consumer) {
    if (consumer !== 'orders') {
      throw Object.assign(new Error(`no handler for ${consumer}`), { code: 'FERRY_HANDLER_MISSING' });
    }
  },
};

describe('attaching a consumer for a name without a handler', () => {
  it('fails with FERRY_HANDLER_MISSING on every transport before touching the broker', async () => {
    const missing = expect.objectContaining({ code: 'FERRY_HANDLER_MISSING' });
    expect(() =>
      attachRabbitConsumer(acceptor, { connection: 'amqp://127.0.0.1:1', queue: 'q', consumer: 'orderz' }),
    ).toThrow(missing);
    const kafka = new KafkaConnection({ brokers: ['127.0.0.1:1'] });
    expect(() =>
      attachKafkaConsumer(acceptor, { connection: kafka, topic: 't', groupId: 'g', consumer: 'orderz' }),
    ).toThrow(missing);
    const sqs = new SqsConnection({ endpoint: 'http://127.0.0.1:1', region: 'us-east-1' });
    expect(() => attachSqsConsumer(acceptor, { connection: sqs, queueUrl: 'q', consumer: 'orderz' })).toThrow(
      missing,
    );
    await sqs.close();
  });
});

/** A consumer of each transport for the handler `orders`, on a broker that does not answer. */
const unreachable: Record<
  string,
  () => { ready(o?: { timeoutMs?: number }): Promise<void>; close(): Promise<void> }
> = {
  RabbitMQ: () =>
    attachRabbitConsumer(acceptor, {
      connection: { url: 'amqp://127.0.0.1:1', reconnectBackoff: { initialMs: 50, maxMs: 100 } },
      queue: 'q',
      consumer: 'orders',
    }),
  Kafka: () =>
    attachKafkaConsumer(acceptor, {
      connection: new KafkaConnection({ brokers: ['127.0.0.1:1'], kafkaLogLevel: 'nothing' }),
      topic: 't',
      groupId: 'g',
      consumer: 'orders',
      reconnectBackoff: { initialMs: 50, maxMs: 100 },
    }),
  SQS: () =>
    attachSqsConsumer(acceptor, {
      connection: new SqsConnection({
        endpoint: 'http://127.0.0.1:1',
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
        maxAttempts: 1,
      }),
      queueUrl: 'q',
      consumer: 'orders',
      reconnectBackoff: { initialMs: 50, maxMs: 100 },
    }),
};

describe('consumer.ready({ timeoutMs })', () => {
  it.each(Object.keys(unreachable))(
    'rejects with FERRY_TIMEOUT while %s is unreachable, and with FERRY_CLOSED once closed',
    async (transport) => {
      const consumer = unreachable[transport]!();
      try {
        await expect(consumer.ready({ timeoutMs: 100 })).rejects.toMatchObject({
          code: 'FERRY_TIMEOUT',
          retriable: true,
        });
        const waiting = expect(consumer.ready()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
        const closing = consumer.close();
        expect(consumer.close()).toBe(closing);
        await closing;
        await waiting;
        await expect(consumer.ready()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
      } finally {
        await consumer.close();
      }
    },
  );

  it('checks its own options like every other options object', async () => {
    const consumer = attachRabbitConsumer(acceptor, {
      connection: 'amqp://127.0.0.1:1',
      queue: 'q',
      consumer: 'orders',
    });
    try {
      await expect(consumer.ready({ timeoutMs: '100' as never })).rejects.toMatchObject({
        code: 'FERRY_CONFIG_INVALID',
        message: expect.stringContaining('got "100" (string)'),
      });
    } finally {
      await consumer.close();
    }
  });
});
