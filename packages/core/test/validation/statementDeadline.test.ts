/**
 * ferry's own statements have a deadline of their own (inbox `statementTimeoutMs`, relay
 * `statementTimeout`), whatever the application's driver is configured to do: a statement that
 * gets no answer in time fails with a retriable FERRY_TIMEOUT, and on node-postgres the pool
 * connection it ran on is destroyed, never returned to the pool while the statement may still run.
 * A statement is kept waiting here by an ACCESS EXCLUSIVE lock another session holds (no driver
 * timeout is set anywhere); the silent network is fault-tests/operations/silent-database.test.ts.
 */
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  createOutboxAdmin,
  createRelay,
  emit,
  fromPg,
  Inbox,
  InboxAdmin,
  isFerryError,
  pgTransactions,
} from '@ferry/core';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { quietLogger } from '../inbox/helpers';

let t: TestDatabase;
let pool: Pool;
let locker: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  locker = listened(new Pool({ connectionString: t.url, max: 1 }));
});
afterAll(async () => {
  await pool.end();
  await locker.end();
  await t.drop();
});

/** Runs `work` while another session holds an ACCESS EXCLUSIVE lock on `table`. */
async function whileLocked<T>(table: string, work: () => Promise<T>): Promise<T> {
  const holder: PoolClient = await locker.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return await work();
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

const settle = <T>(work: Promise<T>) =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('statement deadlines', () => {
  it('fails an acceptance past statementTimeoutMs with a retriable FERRY_TIMEOUT (Prisma)', async () => {
    const inbox = new Inbox(t.prisma, { logger: quietLogger, statementTimeoutMs: 300 });
    const input = { consumer: 'orders', messageId: 'deadline-prisma', tenantId: 'acme', payload: {} };
    const error = await whileLocked('ferry_inbox_receipts', () => settle(inbox.acceptMany([input])));
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    expect((error as { retriable: boolean }).retriable).toBe(true);
  });

  it('destroys the pg pool connection of an acceptance it gave up on', async () => {
    const inbox = new Inbox(pgTransactions(pool), { logger: quietLogger, statementTimeoutMs: 300 });
    const input = { consumer: 'orders', messageId: 'deadline-pg', tenantId: 'acme', payload: {} };
    const outcome = await whileLocked('ferry_inbox_receipts', async () => {
      const error = await settle(inbox.acceptMany([input]));
      // Still inside the lock: the statement would still be waiting on a connection kept by the pool.
      return { error, connections: pool.totalCount };
    });
    expect(isFerryError(outcome.error, 'FERRY_TIMEOUT')).toBe(true);
    expect(outcome.connections).toBe(0);
  });

  it('fails typed and gives the connection up when the backend of a bounded statement is terminated', async () => {
    const inbox = new Inbox(pgTransactions(pool), { logger: quietLogger, statementTimeoutMs: 60_000 });
    const input = { consumer: 'orders', messageId: 'deadline-terminated', tenantId: 'acme', payload: {} };
    const outcome = await whileLocked('ferry_inbox_receipts', async () => {
      const acceptance = settle(inbox.acceptMany([input]));
      await waitUntil(
        'the acceptance waiting on the lock',
        async () => {
          const rows = await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return rows[0]?.n === 1 ? true : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      await t.db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return { error: await acceptance, connections: pool.totalCount };
    });
    expect(isFerryError(outcome.error, 'FERRY_DATABASE_UNAVAILABLE')).toBe(true);
    expect(outcome.connections).toBe(0);
  });

  it('fails a relay cycle past statementTimeout, and the next cycle relays', async () => {
    await emit(t.db, { type: 'deadline.tick', payload: {} });
    const publisher = new InMemoryPublisher();
    const relay = createRelay({
      db: fromPg(pool),
      publisher,
      logger: quietLogger,
      options: { statementTimeout: 300 },
    });
    // The first cycle starts with lease recovery: that is the statement that waits (and runs late).
    const error = await whileLocked('outbox_events', () => settle(relay.runOnce()));
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    await relay.runOnce();
    await relay.close();
    expect(publisher.delivered.map((m) => m.type)).toEqual(['deadline.tick']);
  });

  it('fails an admin read (its pg connection destroyed) and an audited admin transaction past statementTimeoutMs', async () => {
    await emit(t.db, { type: 'deadline.admin', payload: {}, tenantId: 'acme' });
    const admin = createOutboxAdmin(fromPg(pool), { statementTimeoutMs: 300 });
    const outcome = await whileLocked('outbox_events', async () => {
      const read = await settle(admin.stats());
      const connections = pool.totalCount; // still inside the lock: a kept connection would still wait
      const purge = await settle(admin.purgeSent({ before: new Date() }));
      return { read, connections, purge };
    });
    expect(isFerryError(outcome.read, 'FERRY_TIMEOUT')).toBe(true);
    expect(outcome.connections).toBe(0);
    expect(isFerryError(outcome.purge, 'FERRY_TIMEOUT')).toBe(true);
    expect((await admin.stats()).pending).toBeGreaterThan(0);
  });

  it('fails an inbox admin requeue (an audited transaction) past statementTimeoutMs on Prisma', async () => {
    const admin = new InboxAdmin(t.prisma, { statementTimeoutMs: 300 }).forTenant('acme');
    const requeue = {
      id: '00000000-0000-4000-8000-000000000000',
      expectedVersion: 1,
      reason: 'r',
      actor: 'a',
    };
    const error = await whileLocked('ferry_inbox_receipts', () => settle(admin.requeue(requeue)));
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    expect((error as { retriable: boolean }).retriable).toBe(true);
  });
});
