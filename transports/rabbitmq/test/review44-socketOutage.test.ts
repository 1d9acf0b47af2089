/**
 * Review 44, failing test: PostgreSQL down behind a Unix socket dead-letters RabbitMQ deliveries.
 *
 * What I did: an Inbox on a node-postgres Pool that connects through a Unix socket directory
 * (`host: '/var/run/postgresql'`, or a Cloud SQL style `/cloudsql/...` directory), with PostgreSQL
 * stopped: the directory is there, the socket file is not (PostgreSQL removes it on shutdown), so
 * every connect fails with `connect ENOENT <dir>/.s.PGSQL.5432`. A RabbitMQ consumer attached to
 * it (maxTransportRetries 1) received three deliveries.
 * What happened: core's error translation (src/sql/dbErrors.ts) knows ECONNREFUSED, ENOTFOUND,
 * EHOSTUNREACH ... but not ENOENT, so the outage is a FERRY_DATABASE_ERROR ("unknown database
 * error"), which isBatchWideFailure does not hold: the deliveries went round the retry tiers and
 * were dead-lettered (`transport_retries_exhausted`) while the database was merely down; the same
 * deliveries over TCP (ECONNREFUSED) are held unacked for as long as the outage lasts
 * (refusedDatabase.test.ts holds the read-only case). `ferry` CLI says "PostgreSQL refused the
 * statement" for it (packages/cli/test/review44-cli.test.ts).
 * What should happen: a socket connect that finds no server is FERRY_DATABASE_UNAVAILABLE, an
 * outage: nothing dead-lettered, nothing in the retry tiers, the deliveries held, and accepted once
 * PostgreSQL listens on its socket again.
 * Fix direction: ENOENT (a connect to a socket path) in dbErrors' TRANSLATIONS as UNAVAILABLE.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { Inbox, INBOX_TABLE, pgTransactions } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import { InboxQueue, unackedCount, waitFor } from './support/broker';
import { neverAborted, outboxMessages } from './support/messages';

jest.setTimeout(60_000);

describe('PostgreSQL down behind a Unix socket is an outage for the RabbitMQ consumer', () => {
  const setup = new InboxQueue('socketdown');
  const { queue } = setup;
  const socketDir = mkdtempSync(path.join(tmpdir(), 'ferry-review44-pg-'));
  const pools: Pool[] = [];
  const sockets = new Set<Socket>();
  let proxy: Server | undefined;

  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
    for (const socket of sockets) socket.destroy();
    if (proxy) await new Promise((resolve) => proxy!.close(resolve));
    rmSync(socketDir, { recursive: true, force: true });
  });

  /** PostgreSQL starts listening on its socket again: a proxy from the socket file to the test server. */
  async function postgresUp(): Promise<void> {
    const server = new URL(setup.database.url);
    proxy = createServer((client) => {
      const upstream = connect(Number(server.port || 5432), server.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy!.listen(path.join(socketDir, '.s.PGSQL.5432'), resolve));
  }

  it('holds the deliveries past maxTransportRetries, dead-letters none, and accepts them once PostgreSQL is back', async () => {
    const server = new URL(setup.database.url);
    const pool = new Pool({
      host: socketDir,
      port: Number(server.port || 5432),
      user: decodeURIComponent(server.username) || 'postgres',
      database: server.pathname.slice(1),
      max: 2,
    });
    pools.push(pool);
    pool.on('error', () => undefined);
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
    await setup.publisher.publish(outboxMessages(3, { destination: `/${queue}` }), neverAborted());

    const refused = () =>
      events.filter((event) => event.type === 'acceptance-unavailable' || event.type === 'acceptance-failed')
        .length;
    await waitFor('acceptance refused more times than maxTransportRetries allows', async () =>
      refused() >= 5 || events.some((event) => event.type === 'dead-lettered') ? true : undefined,
    );
    expect({
      deadLettered: events.filter((event) => event.type === 'dead-lettered').length,
      dlq: await setup.broker.readyCount(`${queue}.dlq`),
      retryTiers: await Promise.all(consumer.names.retryQueues.map((q) => setup.broker.readyCount(q))),
      unacked: await unackedCount(queue),
    }).toEqual({
      deadLettered: 0,
      dlq: 0,
      retryTiers: consumer.names.retryQueues.map(() => 0),
      unacked: 3,
    });

    await postgresUp();
    await waitFor('all three stored and acked', async () => {
      const rows = await setup.database.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${INBOX_TABLE} WHERE consumer = 'billing'`,
      );
      return rows[0]?.n === 3 && (await unackedCount(queue)) === 0 ? true : undefined;
    });
    expect(await setup.broker.readyCount(`${queue}.dlq`)).toBe(0);
  });
});
