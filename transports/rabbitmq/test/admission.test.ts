/**
 * The inbox's admission limit (maxPendingMessages) against the real inbox and broker (issue 12):
 * a batch refused at the limit settles its duplicate at once and holds only the new deliveries,
 * which are accepted exactly once when the backlog drains; nothing is dead-lettered.
 */
import { Inbox, INBOX_TABLE, type OutboxMessage } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer, type RabbitConsumerOptions } from '@ferry/rabbitmq';
import { InboxQueue, backOnClose, unackedCount, waitFor } from './support/broker';
import { neverAborted, outboxMessages } from './support/messages';

describe('RabbitMQ at the inbox admission limit', () => {
  const setup = new InboxQueue('admission');
  const { queue } = setup;

  async function storedIds(): Promise<string[]> {
    const rows = await setup.database.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${INBOX_TABLE} WHERE consumer = 'billing' ORDER BY message_id`,
    );
    return rows.map((row) => row.message_id);
  }

  /**
   * Attaches a consumer to an inbox with maxPendingMessages 2 and fills its backlog to the
   * limit with two accepted messages; returns them and the consumer's events.
   */
  async function attachAtTheLimit(
    options: Partial<RabbitConsumerOptions> = {},
  ): Promise<{ backlog: OutboxMessage[]; events: TransportConsumerEvent[] }> {
    const events: TransportConsumerEvent[] = [];
    const inbox = new Inbox(setup.database.prisma, { maxPendingMessages: 2 });
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
      retryBackoff: { initialMs: 50, maxMs: 100 },
      observer: (event) => events.push(event),
      ...options,
    });
    setup.attached = consumer;
    await consumer.ready();
    const backlog = outboxMessages(2, { destination: `/${queue}` });
    await setup.publisher.publish(backlog, neverAborted());
    // Its acks sent (the consumer's settled events) before what follows counts unacked deliveries.
    await waitFor('the backlog accepted and acked (the limit reached)', async () =>
      (await storedIds()).length === 2 && settledCount(events) === 2 ? true : undefined,
    );
    return { backlog, events };
  }

  /** Deliveries the consumer acked (its `settled` events). */
  function settledCount(events: readonly TransportConsumerEvent[]): number {
    return events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0);
  }

  it('acks the duplicate of a refused batch at once and accepts the refused deliveries once the backlog drains', async () => {
    const { backlog, events } = await attachAtTheLimit();

    const fresh = outboxMessages(2, { destination: `/${queue}` });
    const outcomes = await setup.publisher.publish([backlog[0]!, ...fresh], neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent', 'sent']);
    await waitFor('the duplicate acked, the new deliveries held', async () =>
      (await setup.broker.readyCount(queue)) === 0 &&
      (await unackedCount(queue)) === 2 &&
      events.some((e) => e.type === 'acceptance-unavailable')
        ? true
        : undefined,
    );
    expect(await storedIds()).toEqual(backlog.map((m) => m.id).sort());

    // The backlog drains: the worker would finish these receipts.
    await setup.database.db.query(
      `UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now() WHERE consumer = 'billing'`,
    );
    await waitFor('every delivery accepted', async () =>
      (await storedIds()).length === 4 ? true : undefined,
    );
    expect(await backOnClose(setup.attached!, setup.broker, queue)).toBe(0);
    expect(await storedIds()).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
    expect(await setup.broker.readyCount(`${queue}.dlq`)).toBe(0);
    expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
  });

  it('holds several refused batches in flight at once and accepts each of their deliveries once as the backlog drains', async () => {
    await setup.attached?.close();
    await setup.database.db.query(`DELETE FROM ${INBOX_TABLE}`);
    const { backlog, events } = await attachAtTheLimit({ maxBatchSize: 2, maxBatchesInFlight: 6 });

    const fresh = outboxMessages(6, { destination: `/${queue}` });
    await setup.publisher.publish(fresh, neverAborted());
    // At least three batches (of at most two), each refused and held at once: every refused
    // delivery reported once, as the outage of its own batch.
    const outageBegan = () => events.filter((e) => e.type === 'acceptance-unavailable' && e.attempt === 1);
    await waitFor('six deliveries held in several batches', async () =>
      // None ready, the backlog acked, all six reported held: six unacked.
      outageBegan().reduce((n, e) => n + (e.type === 'acceptance-unavailable' ? e.count : 0), 0) === 6 &&
      (await setup.broker.readyCount(queue)) === 0
        ? true
        : undefined,
    );
    expect(outageBegan().length).toBeGreaterThanOrEqual(3);
    expect(await storedIds()).toEqual(backlog.map((m) => m.id).sort());

    // The worker would finish receipts as they come: each drain lets one more batch in.
    await waitFor('every delivery accepted and acked', async () => {
      await setup.database.db.query(
        `UPDATE ${INBOX_TABLE} SET status = 'COMPLETED', completed_at = now() WHERE status = 'PENDING'`,
      );
      return (await storedIds()).length === 8 ? true : undefined;
    });
    expect(await backOnClose(setup.attached!, setup.broker, queue)).toBe(0);
    expect(await storedIds()).toEqual([...backlog, ...fresh].map((m) => m.id).sort());
    expect(await setup.broker.readyCount(`${queue}.dlq`)).toBe(0);
    expect(events.filter((e) => e.type === 'dead-lettered' || e.type === 'acceptance-failed')).toEqual([]);
  });
});
