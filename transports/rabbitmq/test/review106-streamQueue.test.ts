/**
 * Review 106 (a user attaching ferry's consumer to queues they already have, `declareTopology:
 * false`): the queue is a stream queue.
 *
 * README, known limits: "Stream queues are not supported: acks and requeues mean nothing on a
 * stream". On HEAD the consumer attached all the same (ready() resolved, check() answered ready)
 * and lost messages silently: a stream consumer starts at the next offset, so whatever was
 * published while it was not attached (a restart, a lost connection, a channel closed under a
 * batch) was never delivered again; and ferry's requeue (close() during a database outage, a copy
 * the broker did not take) is a basic.nack, which RabbitMQ answers on a stream by closing the
 * whole connection (540 NOT_IMPLEMENTED), a publisher sharing it included. Now the attach finds
 * the stream (queue.declare-ok counts no consumer of a stream, ferry's own included) before it
 * offers anything to the inbox: ready() rejects at once with FERRY_PERMANENT_FAILURE naming it.
 * The queue types ferry does support still attach: classic, lazy, quorum (with a delivery limit),
 * single-active-consumer queues where ferry waits behind another application's consumer.
 */
import { FerryError } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import * as amqp from 'amqplib';
import { AMQP_URL } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review106: attaching to a queue that already exists, by its type', () => {
  const f = useConsumerFixture();

  afterEach(async () => {
    await f.broker.channel.deleteQueue(f.queue).catch(() => undefined);
  });

  it('a stream queue: ready() rejects at once with FERRY_PERMANENT_FAILURE naming the stream, nothing accepted', async () => {
    await f.broker.channel.assertQueue(f.queue, { durable: true, arguments: { 'x-queue-type': 'stream' } });
    const consumer = attachRabbitConsumer(f.acceptor, {
      connection: f.connection,
      queue: f.queue,
      consumer: 'billing',
      declareTopology: false,
    });
    f.consumer = consumer;
    const error = await consumer.ready({ timeoutMs: 20_000 }).then(
      () => new Error('ready() resolved on a stream queue'),
      (rejection: unknown) => rejection,
    );
    if (!(error instanceof FerryError)) throw error;
    expect([error.code, error.retriable]).toEqual(['FERRY_PERMANENT_FAILURE', false]);
    expect(error.message).toContain('stream');
    await expect(consumer.check()).rejects.toThrow(/stream/);
    // A message published now is never offered to the inbox by a consumer that cannot keep it.
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'on-stream' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await f.acceptor.storedIds()).toEqual([]);
  }, 60_000);

  const supported: Array<[string, Record<string, unknown>]> = [
    ['classic', {}],
    ['lazy classic', { 'x-queue-mode': 'lazy' }],
    ['quorum with a delivery limit', { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 }],
  ];
  it.each(supported)(
    'a %s queue attaches and delivers',
    async (_kind, args) => {
      await f.broker.channel.assertQueue(f.queue, { durable: true, arguments: args });
      // Waiting before the attach: delivered at once, before the attach's check of the queue is answered.
      const waiting = Array.from({ length: 20 }, (_, i) => `waiting-${i}`);
      for (const id of waiting)
        f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: id });
      await f.attach({ declareTopology: false });
      f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'typed-1' });
      await f.expectStoredOnce([...waiting, 'typed-1']);
    },
    60_000,
  );

  it.each([
    ['classic', {}],
    ['quorum', { 'x-queue-type': 'quorum' }],
  ] as Array<[string, Record<string, unknown>]>)(
    'a single-active-consumer %s queue: ferry attaches waiting behind another consumer, and takes over when it leaves',
    async (_kind, args) => {
      await f.broker.channel.assertQueue(f.queue, {
        durable: true,
        arguments: { ...args, 'x-single-active-consumer': true },
      });
      const other = await amqp.connect(AMQP_URL);
      try {
        const otherChannel = await other.createChannel();
        await otherChannel.prefetch(1);
        const { consumerTag } = await otherChannel.consume(f.queue, () => undefined);
        const consumer = await f.attach({ declareTopology: false });
        await consumer.check();
        await otherChannel.cancel(consumerTag);
        await other.close();
        f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'sac-1' });
        await f.expectStoredOnce(['sac-1']);
      } finally {
        await other.close().catch(() => undefined);
      }
    },
    60_000,
  );
});
