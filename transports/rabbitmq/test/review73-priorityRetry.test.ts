/**
 * Review 73 (hostile user of real broker features): a priority work queue (`x-max-priority`,
 * declared by the application and consumed with `declareTopology: false`).
 *
 * README ("The copy published to the dead-letter exchange or a retry tier carries the delivery's
 * headers ... and properties, plus ferry's"): a delivery sent round a retry tier comes back as
 * the same message. copyOptions keeps only content type and encoding, ids, type, timestamp and
 * app id: the `priority` property is left out, so an urgent message whose acceptance failed once
 * comes back at priority 0 and waits behind every lower-priority message of the backlog (and its
 * `replyTo` is gone from its dead-letter copy likewise).
 */
import * as amqp from 'amqplib';
import { FerryError, type InboxAcceptInput, type InboxAcceptResult } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { Message } from 'amqplib';
import { AMQP_URL, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review73: a priority work queue and the retry tiers', () => {
  const f = useConsumerFixture();

  it('a delivery back from a retry tier keeps its priority: it is accepted before the lower-priority backlog', async () => {
    const tierMs = 1_000;
    const dlx = `${f.queue}.dlx`;
    const dlq = `${f.queue}.dlq`;
    const tier = `${f.queue}.retry.${tierMs}ms`;
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
      arguments: { 'x-dead-letter-exchange': dlx, 'x-max-priority': 10 },
    });

    const urgent = uniqueName('urgent');
    const blocker = uniqueName('blocker');
    const backlog = [1, 2, 3].map((i) => uniqueName(`low${i}`));
    let failUrgent = true;
    const events: TransportConsumerEvent[] = [];
    /** The priority each delivery arrived with, in arrival order (read by the tenant function). */
    const arrivals: { id: string; priority: unknown }[] = [];
    await f.attach({
      declareTopology: false,
      prefetch: 1,
      maxTransportRetries: 3,
      retryBackoff: { initialMs: tierMs, maxMs: tierMs },
      observer: (event) => events.push(event),
      tenant: (message: Message) => {
        arrivals.push({
          id: message.properties.messageId as string,
          priority: message.properties.priority as unknown,
        });
        return null;
      },
      inbox: {
        maxPayloadBytes: 4_096,
        acceptMany: (inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> =>
          failUrgent && inputs.some((i) => i.messageId === urgent)
            ? Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'))
            : f.acceptor.acceptMany(inputs),
      },
    });
    expect(f.consumer!.names.retryQueues).toEqual([tier]);

    const producer = await amqp.connect(AMQP_URL);
    const confirms = await producer.createConfirmChannel();
    const send = (id: string, priority: number) =>
      new Promise<void>((resolve, reject) => {
        confirms.sendToQueue(
          f.queue,
          Buffer.from(JSON.stringify({ id })),
          { messageId: id, contentType: 'application/json', persistent: true, priority },
          (error: unknown) => (error ? reject(new Error(`${id} nacked`)) : resolve()),
        );
      });
    try {
      await send(urgent, 9);
      await waitFor('the urgent message sent round the retry tier', () =>
        events.some((e) => e.type === 'acceptance-failed') ? true : undefined,
      );
      failUrgent = false;
      // A backlog builds up behind a slow acceptance while the urgent message waits in its tier.
      f.acceptor.hold();
      await send(blocker, 5);
      await waitFor('the blocker in acceptance', () => (f.acceptor.held() === 1 ? true : undefined));
      for (const id of backlog) await send(id, 1);
      await waitFor('the urgent message back in the work queue', async () =>
        (await f.broker.readyCount(tier)) === 0 && (await f.broker.readyCount(f.queue)) === 4
          ? true
          : undefined,
      );
      f.acceptor.release();
      await f.expectStoredOnce([urgent, blocker, ...backlog]);
      const afterBlocker = arrivals.slice(arrivals.findIndex((a) => a.id === blocker) + 1);
      // Fails on HEAD: the urgent message came back with no priority and was delivered last,
      // after the three priority-1 messages ([low1, low2, low3, urgent], priority undefined).
      expect(afterBlocker[0]).toEqual({ id: urgent, priority: 9 });
    } finally {
      await producer.close().catch(() => undefined);
    }
  }, 60_000);
});
