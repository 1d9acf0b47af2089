/**
 * Review 73 (hostile user of real broker features): the work queue is consumed exclusively by
 * another application for a while (`basic.consume` with `exclusive`: a legacy consumer still
 * draining it during a migration, an operator's debugging session).
 *
 * README: ready() rejects at once with FERRY_PERMANENT_FAILURE (not retriable) only "when the
 * broker refuses the consumer in a way only an operator can fix ... 403 ACCESS_REFUSED
 * (credentials, permissions)". RabbitMQ answers a consume on a queue another consumer holds
 * exclusively with 403 ACCESS_REFUSED ("in exclusive use"): no credential or permission is
 * wrong, nothing needs fixing, and the consumer attaches by itself once the other one goes.
 * ferry reads only the reply code and reports it as permanent (not retriable), while the same
 * situation as an exclusive queue (405 RESOURCE_LOCKED) is a retriable FERRY_TIMEOUT: an
 * application gating its start on ready() gives up at once, told not to retry.
 */
import { FerryError } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import * as amqp from 'amqplib';
import { AMQP_URL, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review73: a work queue another consumer holds exclusively for a while', () => {
  const f = useConsumerFixture();

  it('ready() reports a retriable wait (FERRY_TIMEOUT naming the exclusive use), not FERRY_PERMANENT_FAILURE, and the consumer attaches once the other one goes', async () => {
    // The work queue as ferry declares it, consumed exclusively by another application.
    await f.broker.channel.assertQueue(f.queue, {
      durable: true,
      arguments: { 'x-dead-letter-exchange': `${f.queue}.dlx` },
    });
    const other = await amqp.connect(AMQP_URL);
    try {
      const otherChannel = await other.createChannel();
      const { consumerTag } = await otherChannel.consume(f.queue, () => undefined, { exclusive: true });

      const consumer = attachRabbitConsumer(f.acceptor, {
        connection: f.connection,
        queue: f.queue,
        consumer: 'billing',
        retryBackoff: { initialMs: 100, maxMs: 200 },
      });
      f.consumer = consumer;
      const error = await consumer.ready({ timeoutMs: 2_000 }).then(
        () => new Error('ready() resolved while another consumer holds the queue exclusively'),
        (rejection: unknown) => rejection,
      );
      if (!(error instanceof FerryError)) throw error;
      // Fails on HEAD: ['FERRY_PERMANENT_FAILURE', false] at once ("RabbitMQ refused consumer of
      // queue …: 403 (ACCESS-REFUSED) … in exclusive use").
      expect([error.code, error.retriable]).toEqual(['FERRY_TIMEOUT', true]);
      expect(error.message).toContain('exclusive use');

      await otherChannel.cancel(consumerTag);
      await waitFor('attached once the exclusive consumer went', () =>
        consumer.check().then(
          () => true,
          () => undefined,
        ),
      );
      f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'after-exclusive' });
      await f.expectStoredOnce(['after-exclusive']);
    } finally {
      await other.close().catch(() => undefined);
    }
  }, 60_000);
});
