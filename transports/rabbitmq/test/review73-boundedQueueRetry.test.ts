/**
 * Review 73 (hostile user of real broker features): a work queue bounded with RabbitMQ's
 * `x-max-length` + `x-overflow: reject-publish` (declared by the application, consumed with
 * `declareTopology: false` as the README's "Consuming a queue that already exists" says; an
 * operator's max-length policy does the same to a queue ferry declared).
 *
 * The consumer sends a delivery whose acceptance failed retriably round a retry tier and acks it
 * once the tier queue confirmed the copy. The trip back is the broker's own dead-lettering (the
 * tier's TTL expires into the default exchange, routing key the work queue), which is
 * at-most-once: a work queue that is full at that moment refuses it and RabbitMQ drops it
 * without a trace. The README knows this of a full queue ("a full queue drops what the broker
 * dead-letters (the message was lost)") and avoids it for dead-letter copies, but not for the
 * retry tiers: a delivery the broker confirmed into ferry's hands is lost, neither accepted nor
 * dead-lettered.
 */
import * as amqp from 'amqplib';
import { FerryError, type InboxAcceptInput, type InboxAcceptResult } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { AMQP_URL, unackedCount, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review73: retry tiers into a work queue bounded with reject-publish', () => {
  const f = useConsumerFixture();

  it('loses no delivery: one sent round a retry tier while the work queue is full is accepted or dead-lettered, never dropped', async () => {
    const tierMs = 1_500;
    const dlx = `${f.queue}.dlx`;
    const dlq = `${f.queue}.dlq`;
    const tier = `${f.queue}.retry.${tierMs}ms`;
    // The application's own declarations: the names and arguments of the README's "Topology",
    // the work queue bounded to one ready message, refusing publishes beyond it.
    const ch = f.broker.channel;
    await ch.assertExchange(dlx, 'fanout', { durable: true });
    await ch.assertQueue(dlq, { durable: true });
    await ch.bindQueue(dlq, dlx, '');
    await ch.assertQueue(tier, {
      durable: true,
      arguments: {
        'x-message-ttl': tierMs,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': f.queue,
      },
    });
    await ch.assertQueue(f.queue, {
      durable: true,
      arguments: { 'x-dead-letter-exchange': dlx, 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });

    const a = uniqueName('a');
    const b = uniqueName('b');
    const c = uniqueName('c');
    let failA = true;
    const events: TransportConsumerEvent[] = [];
    await f.attach({
      declareTopology: false,
      prefetch: 1,
      maxTransportRetries: 3,
      retryBackoff: { initialMs: tierMs, maxMs: tierMs },
      observer: (event) => events.push(event),
      inbox: {
        maxPayloadBytes: 4_096,
        // A database error of unknown cause for `a` (FERRY_DATABASE_ERROR, retriable): it goes
        // round the retry tier; everything else goes to the real table.
        acceptMany: (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> =>
          failA && inputs.some((i) => i.messageId === a)
            ? Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'))
            : f.acceptor.acceptMany(inputs),
      },
    });
    expect(f.consumer!.names.retryQueues).toEqual([tier]);

    // The producer: publishes with confirms (a nack here means the work queue refused it).
    const producer = await amqp.connect(AMQP_URL);
    const confirms = await producer.createConfirmChannel();
    const send = (id: string) =>
      new Promise<void>((resolve, reject) => {
        confirms.sendToQueue(
          f.queue,
          Buffer.from(JSON.stringify({ id })),
          { messageId: id, contentType: 'application/json', persistent: true },
          (error: unknown) => (error ? reject(new Error(`${id} nacked`)) : resolve()),
        );
      });

    try {
      await send(a);
      await waitFor('a sent round the retry tier', () =>
        events.some((e) => e.type === 'acceptance-failed') ? true : undefined,
      );
      failA = false;
      // The application's load while `a` waits in its tier: `b` in acceptance (the database slow),
      // `c` ready behind it: the work queue is at its bound.
      f.acceptor.hold();
      await send(b);
      await waitFor('b in acceptance', () => (f.acceptor.held() === 1 ? true : undefined));
      await send(c);
      // `a` expires out of its tier into the full work queue.
      await waitFor('the tier queue empty', async () =>
        (await f.broker.readyCount(tier)) === 0 ? true : undefined,
      );
      f.acceptor.release();
      await waitFor('b and c accepted', async () => {
        const stored = await f.acceptor.storedIds();
        return stored.includes(b) && stored.includes(c) ? true : undefined;
      });
      // Nothing left anywhere the broker or the consumer could still hold `a`.
      await waitFor('the work queue and the tier settled', async () =>
        (await f.broker.readyCount(f.queue)) === 0 &&
        (await unackedCount(f.queue)) === 0 &&
        (await f.broker.readyCount(tier)) === 0
          ? true
          : undefined,
      );
      const deadLettered = (await f.broker.drain(dlq)).map((m) => m.properties.messageId as string);
      const stored = await f.acceptor.storedIds();
      // Fails on HEAD: 'lost': RabbitMQ dropped `a` as it expired out of the tier into the full
      // work queue, after ferry had acked it (neither accepted nor dead-lettered).
      const where = stored.includes(a) ? 'accepted' : deadLettered.includes(a) ? 'dead-lettered' : 'lost';
      expect(where).not.toBe('lost');
    } finally {
      await producer.close().catch(() => undefined);
    }
  }, 60_000);
});
