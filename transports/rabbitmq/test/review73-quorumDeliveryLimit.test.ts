/**
 * Review 73 (hostile user of real broker features): a quorum work queue with `x-delivery-limit`
 * (RabbitMQ's own poison-message guard; RabbitMQ 4 gives every quorum queue one, 20), consumed
 * with `declareTopology: false`, its `x-dead-letter-exchange` the consumer's dead-letter exchange
 * as the README's "Consuming a queue that already exists" asks.
 *
 * README: when a dead-letter copy is not confirmed ("a dead-letter queue full with `x-overflow:
 * reject-publish`"), "the delivery is left unacked ... and it is requeued after the backoff
 * delay ... it is never rejected to the work queue's own x-dead-letter-exchange instead, which
 * routes to the same dead-letter queue, where a full queue drops what the broker dead-letters
 * (the message was lost)". It stays in the work queue until its copy can be made.
 *
 * On a quorum queue every requeue (basic.nack, requeue) counts as a delivery: after
 * `x-delivery-limit` of them the broker dead-letters the message itself, to that same exchange,
 * into that same full queue, which drops it: exactly the loss the README says ferry avoids. The
 * requeue is ferry's choice (a delivery held unacked costs the broker nothing).
 */
import * as amqp from 'amqplib';
import type { GetMessage } from 'amqplib';
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { AMQP_URL, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review73: a quorum work queue with x-delivery-limit, its dead-letter queue full', () => {
  const f = useConsumerFixture();

  it('keeps an invalid delivery until the dead-letter queue takes its copy, never letting the broker drop it at the delivery limit', async () => {
    const dlx = `${f.queue}.dlx`;
    const dlq = `${f.queue}.dlq`;
    // Witnesses what reaches the dead-letter exchange (fanout), whether the full queue takes it or not.
    const tap = uniqueName('tap');
    const ch = f.broker.channel;
    await ch.assertExchange(dlx, 'fanout', { durable: true });
    await ch.assertQueue(dlq, {
      durable: true,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });
    await ch.bindQueue(dlq, dlx, '');
    await ch.assertQueue(tap, { durable: true });
    await ch.bindQueue(tap, dlx, '');
    const events: TransportConsumerEvent[] = [];
    const producer = await amqp.connect(AMQP_URL);
    try {
      const confirms = await producer.createConfirmChannel();
      const send = (queue: string, id: string, body: string) =>
        new Promise<void>((resolve, reject) => {
          confirms.sendToQueue(
            queue,
            Buffer.from(body),
            { messageId: id, contentType: 'application/json', persistent: true },
            (error: unknown) => (error ? reject(new Error(`${id} nacked`)) : resolve()),
          );
        });
      // An earlier dead letter nobody has looked at yet: the dead-letter queue is at its bound.
      await send(dlq, uniqueName('earlier'), '{"earlier":true}');
      await ch.assertQueue(f.queue, {
        durable: true,
        arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 2, 'x-dead-letter-exchange': dlx },
      });
      // The one retry tier of retryBackoff { initialMs: 100, maxMs: 100 } (not used here).
      await ch.assertQueue(`${f.queue}.retry.100ms`, {
        durable: true,
        arguments: {
          'x-message-ttl': 100,
          'x-dead-letter-exchange': '',
          'x-dead-letter-routing-key': f.queue,
        },
      });
      const consumer = await f.attach({
        declareTopology: false,
        prefetch: 1,
        retryBackoff: { initialMs: 100, maxMs: 100 },
        observer: (event) => events.push(event),
      });
      expect(consumer.names.retryTiersMs).toEqual([100]);

      const poison = uniqueName('poison');
      await send(f.queue, poison, 'not json');
      // Either the broker dead-lettered it itself (it reached the tap with a delivery_limit
      // x-death), or ferry kept it through six refused copies.
      const tapped: GetMessage[] = [];
      const brokerDeadLettered = () =>
        tapped.find(
          (m) =>
            m.properties.messageId === poison &&
            (m.properties.headers?.['x-death'] as { reason?: unknown }[] | undefined)?.[0]?.reason ===
              'delivery_limit',
        );
      await waitFor(
        'the broker dead-lettered it at the delivery limit, or six copies refused',
        async () => {
          tapped.push(...(await f.broker.drain(tap)));
          return brokerDeadLettered() !== undefined || events.filter((e) => e.type === 'error').length >= 6
            ? true
            : undefined;
        },
        30_000,
      );
      // Fails on HEAD: ferry requeued it after each refused copy; at its third requeue (past
      // x-delivery-limit 2) the quorum queue dead-lettered it itself (x-death reason
      // delivery_limit, seen by the tap) into the full dead-letter queue, which dropped it: gone
      // from the work queue, in no queue that keeps it, without ferry's reason.
      expect(brokerDeadLettered()?.properties.headers?.['x-death']).toBeUndefined();

      // Room in the dead-letter queue: the copy with ferry's reason lands there.
      await f.broker.drain(dlq);
      const dead = await waitFor('the copy in the dead-letter queue', async () => {
        const found = (await f.broker.drain(dlq)).find((m) => m.properties.messageId === poison);
        return found;
      });
      expect(dead.properties.headers?.[FERRY_HEADERS.rejectReason]).toBe('unparseable_body');
    } finally {
      await producer.close().catch(() => undefined);
      await ch.deleteQueue(tap).catch(() => undefined);
    }
  }, 60_000);
});
