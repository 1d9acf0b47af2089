/**
 * A batch whose acceptance times out because of its size goes through in smaller pieces
 * (acceptHolding halves what it offers after a timeout) instead of being held for ever: before,
 * the same batch was offered again after every backoff and timed out every time, so the
 * consumer's whole prefetch window stalled for good (failed first).
 *
 * The size is made to matter with a trigger that sleeps 100 ms per inserted receipt against a
 * 1,000 ms statement deadline: the 20 deliveries together take 2 s, five at a time 0.5 s. On a
 * slower machine the pieces only get smaller (one receipt: 0.1 s).
 */
import { Inbox, INBOX_TABLE, type OutboxMessage } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer, declareWorkQueue, type RabbitConsumer } from '@ferry/rabbitmq';
import { InboxQueue, unackedCount, waitFor } from './support/broker';
import { neverAborted, outboxMessages } from './support/messages';
import { slowReceiptInserts } from '../../../test-support/slowReceipts';

describe('RabbitMQ: a batch too big for the acceptance deadline', () => {
  const setup = new InboxQueue('oversized');
  const { queue } = setup;

  /** 20 deliveries waiting in the queue (declared on first use), before any consumer attaches. */
  async function backlog(): Promise<OutboxMessage[]> {
    await declareWorkQueue(setup.broker.channel, { queue });
    const messages = outboxMessages(20, { destination: `/${queue}` });
    const outcomes = await setup.publisher.publish(messages, neverAborted());
    expect(outcomes.every((o) => o.status === 'sent')).toBe(true);
    return messages;
  }
  beforeAll(async () => {
    await slowReceiptInserts(setup.database.db, 0.1);
  });
  /** The consumer both cases attach: the whole backlog in one prefetch window, quick retries. */
  function attach(inbox: Inbox, observer: (event: TransportConsumerEvent) => void): RabbitConsumer {
    return attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
      prefetch: 20,
      retryBackoff: { initialMs: 20, maxMs: 40 },
      observer,
    });
  }

  it('is accepted in smaller pieces, each delivery once, nothing dead-lettered', async () => {
    const messages = await backlog();

    const events: TransportConsumerEvent[] = [];
    const inbox = new Inbox(setup.database.prisma, { statementTimeoutMs: 1_000 });
    const consumer = attach(inbox, (event) => events.push(event));
    setup.attached = consumer;
    await consumer.ready();

    const stored = async () =>
      (
        await setup.database.db.query<{ message_id: string }>(
          `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
        )
      ).map((row) => row.message_id);
    await waitFor(
      'every delivery accepted and acked',
      async () =>
        (await stored()).length === 20 &&
        (await setup.broker.readyCount(queue)) === 0 &&
        (await unackedCount(queue)) === 0
          ? true
          : undefined,
      30_000,
    );
    expect(await stored()).toEqual(messages.map((m) => m.id).sort());
    // The whole batch did time out first: the pieces are what got it through.
    expect(
      events.some(
        (e) => e.type === 'acceptance-unavailable' && /FERRY_TIMEOUT|timed out|timeout/i.test(e.error),
      ),
    ).toBe(true);
    expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
    expect(await setup.broker.readyCount(`${queue}.dlq`)).toBe(0);
    await inbox.close();
  }, 60_000);

  it('Review finding (failed first): close() while a halved batch goes through part by part stops accepting the parts still held and requeues them', async () => {
    await setup.attached?.close();
    await backlog();

    const inbox = new Inbox(setup.database.prisma, { statementTimeoutMs: 1_000 });
    const seen: string[] = [];
    let closed: Promise<void> | null = null;
    let acceptedBeforeClose = 0;
    let firstPart!: () => void;
    const partDone = new Promise<void>((resolve) => (firstPart = resolve));
    const consumer: RabbitConsumer = attach(inbox, (event) => {
      seen.push(event.type);
      if (event.type !== 'accepted' || closed !== null) return;
      acceptedBeforeClose += event.count;
      // The first part of a halved batch is acked: close() now (as a deploy's SIGTERM would).
      // (A first few deliveries the broker sent apart may have gone through whole before.)
      if (seen.includes('acceptance-unavailable')) {
        closed = consumer.close();
        firstPart();
      }
    });
    setup.attached = consumer;
    await consumer.ready();
    await Promise.race([
      partDone,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no part accepted')), 30_000)),
    ]);
    await closed;

    expect(acceptedBeforeClose).toBeLessThan(20);
    // Expected: the parts not accepted before close() go back to the queue (nack, requeue).
    // Before: close() waited while every remaining part was accepted and acked, one slow
    // statement each. (Receipts of a statement ferry stopped waiting for may still be committed
    // by the server: they are read as duplicates when redelivered, so rows are not counted here.)
    expect(await setup.broker.readyCount(queue)).toBe(20 - acceptedBeforeClose);
    expect(await unackedCount(queue)).toBe(0);
    await inbox.close();
  }, 60_000);
});
