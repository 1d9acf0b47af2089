/**
 * Review finding (failed first): when PostgreSQL refuses ferry as a whole (here a read-only server,
 * as a standby is after a failover left the endpoint on it: SQLSTATE 25006; core's
 * test/validation/refusedDatabase covers a missing role, database or GRANT), the consumer spent its
 * transport retries on every delivery and dead-lettered them all (`transport_retries_exhausted`).
 * Such a refusal is an outage: deliveries are held unacked, spending no retry, and nothing reaches
 * the retry tiers or the dead-letter queue; once the database takes writes they are accepted once.
 */
import { Pool } from 'pg';
import { Inbox, INBOX_TABLE, pgTransactions } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import { InboxQueue, unackedCount, waitFor } from './support/broker';
import { neverAborted, outboxMessages } from './support/messages';

describe('a read-only database is an outage for the RabbitMQ consumer', () => {
  const setup = new InboxQueue('readonly');
  const { queue } = setup;
  const pools: Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it('holds the deliveries unacked past maxTransportRetries, dead-letters none, and accepts them once writes come back', async () => {
    let readOnly = true;
    const pool = new Pool({ connectionString: setup.database.url, max: 2 });
    pools.push(pool);
    // The database is dropped (its sessions ended) before this file's afterAll ends the pool.
    pool.on('error', () => undefined);
    // Every connection's transactions are read-only while `readOnly` holds (a standby's answer).
    pool.on('connect', (client) => {
      if (readOnly) void client.query('SET default_transaction_read_only = on').catch(() => undefined);
    });
    const inbox = new Inbox(pgTransactions(pool), { worker: { enabled: false } });
    const events: TransportConsumerEvent[] = [];
    const consumer = attachRabbitConsumer(inbox, {
      connection: setup.connection,
      queue,
      consumer: 'billing',
      maxTransportRetries: 1,
      retryBackoff: { initialMs: 20, maxMs: 50 },
      observer: (event) => events.push(event),
    });
    setup.attached = consumer;
    await consumer.ready();
    const messages = outboxMessages(3, { destination: `/${queue}` });
    await setup.publisher.publish(messages, neverAborted());

    // An outage is reported `acceptance-unavailable` (held); a delivery's own failure
    // `acceptance-failed` (retried, then dead-lettered).
    const refused = () =>
      events.filter((event) => event.type === 'acceptance-unavailable' || event.type === 'acceptance-failed')
        .length;
    await waitFor('acceptance refused more times than maxTransportRetries allows', async () =>
      refused() >= 5 || events.some((event) => event.type === 'dead-lettered') ? true : undefined,
    );
    const deadLettered = events.filter((event) => event.type === 'dead-lettered').length;
    expect({
      deadLettered,
      dlq: await setup.broker.readyCount(`${queue}.dlq`),
      retryTiers: await Promise.all(consumer.names.retryQueues.map((q) => setup.broker.readyCount(q))),
      unacked: await unackedCount(queue),
    }).toEqual({
      deadLettered: 0,
      dlq: 0,
      retryTiers: consumer.names.retryQueues.map(() => 0),
      unacked: 3,
    });

    readOnly = false;
    // The server takes writes again: both pooled connections drop the setting (taken at once, so
    // they are the pool's two).
    await Promise.all(
      [0, 1].map(async () => {
        const client = await pool.connect();
        await client.query('SET default_transaction_read_only = off');
        client.release();
      }),
    );
    await waitFor('all three stored and acked', async () => {
      const rows = await setup.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'billing'`,
      );
      return rows[0]?.n === 3 && (await unackedCount(queue)) === 0 ? true : undefined;
    });
    expect(await setup.broker.readyCount(`${queue}.dlq`)).toBe(0);
  });
});
