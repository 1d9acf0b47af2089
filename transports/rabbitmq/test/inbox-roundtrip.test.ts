/**
 * The round trip against the real inbox of @ferry/core: outbox messages → RabbitMQ → Inbox.acceptMany
 * (ferry_inbox_receipts, migrated by createTestDatabase), with duplicates published on purpose.
 */
import { Inbox, INBOX_TABLE } from '@ferry/core';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import { InboxQueue, unackedCount, waitFor } from './support/broker';
import { neverAborted, outboxMessages } from './support/messages';

describe('RabbitMQ round trip into the @ferry/core inbox', () => {
  const setup = new InboxQueue('inbox');
  const { queue } = setup;

  it('stores one receipt per message although duplicates were published, and acks them all', async () => {
    const inbox = new Inbox(setup.database.prisma);
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
    });
    setup.attached = consumer;
    await consumer.ready();
    const messages = outboxMessages(25, { destination: `/${queue}` });

    const first = await setup.publisher.publish(messages, neverAborted());
    const again = await setup.publisher.publish(messages.slice(0, 10), neverAborted());
    expect([...first, ...again].every((o) => o.status === 'sent')).toBe(true);

    await waitFor('every delivery acked', async () =>
      (await setup.broker.readyCount(queue)) === 0 && (await unackedCount(queue)) === 0 ? true : undefined,
    );
    const rows = await setup.database.db.query<{ message_id: string; n: number }>(
      `SELECT message_id, count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'billing' GROUP BY message_id`,
    );
    const stored = new Map(rows.map((row) => [row.message_id, row.n]));
    expect({
      missing: messages.map((m) => m.id).filter((id) => !stored.has(id)),
      extra: rows.filter((row) => row.n > 1 || !messages.some((m) => m.id === row.message_id)),
    }).toEqual({ missing: [], extra: [] });
    expect(await setup.broker.readyCount(`${queue}.dlq`)).toBe(0);
  });
});
