/**
 * The round trip against the real inbox of @ferry/core: outbox messages → RabbitMQ → Inbox.acceptMany
 * (ferry_inbox_receipts, migrated by createTestDatabase), with duplicates published on purpose.
 */
import { Inbox, INBOX_TABLE } from '@ferry/core';
import {
  RabbitConnection,
  RabbitPublisher,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  AMQP_URL,
  openTestBroker,
  unackedCount,
  uniqueName,
  waitFor,
  type TestBroker,
} from './support/broker';
import { neverAborted, outboxMessages } from './support/messages';

describe('RabbitMQ round trip into the @ferry/core inbox', () => {
  let database: TestDatabase;
  let broker: TestBroker;
  let connection: RabbitConnection;
  let publisher: RabbitPublisher;
  let consumer: RabbitConsumer;
  const queue = uniqueName('inbox');

  beforeAll(async () => {
    database = await createTestDatabase();
    broker = await openTestBroker();
    connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('inbox_rt') });
    publisher = new RabbitPublisher(connection);
  });

  afterAll(async () => {
    await consumer.close();
    await publisher.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue });
    await broker.close();
    await database.drop();
  });

  it('stores one receipt per message although duplicates were published, and acks them all', async () => {
    const inbox = new Inbox(database.prisma);
    consumer = attachRabbitConsumer(inbox, { connection, queue, consumer: 'billing' });
    await consumer.ready();
    const messages = outboxMessages(25, { destination: `/${queue}` });

    const first = await publisher.publish(messages, neverAborted());
    const again = await publisher.publish(messages.slice(0, 10), neverAborted());
    expect([...first, ...again].every((o) => o.status === 'sent')).toBe(true);

    await waitFor('every delivery acked', async () =>
      (await broker.readyCount(queue)) === 0 && (await unackedCount(queue)) === 0 ? true : undefined,
    );
    const rows = await database.db.query<{ message_id: string; n: number }>(
      `SELECT message_id, count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'billing' GROUP BY message_id`,
    );
    const stored = new Map(rows.map((row) => [row.message_id, row.n]));
    expect({
      missing: messages.map((m) => m.id).filter((id) => !stored.has(id)),
      extra: rows.filter((row) => row.n > 1 || !messages.some((m) => m.id === row.message_id)),
    }).toEqual({ missing: [], extra: [] });
    expect(await broker.readyCount(`${queue}.dlq`)).toBe(0);
  });
});
