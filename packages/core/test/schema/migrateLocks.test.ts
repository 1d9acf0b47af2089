/**
 * A migration on a live database: its DDL waits for a lock other sessions hold (CREATE INDEX
 * needs a SHARE lock, ALTER TABLE an ACCESS EXCLUSIVE one). While it waits, every later writer of
 * the table queues behind it, so one old transaction would stop acceptance for the migration's
 * whole deadline. The migrator waits at most `lockTimeoutMs` per try, then rolls back (the queue
 * behind it goes on), backs off and tries again until its deadline.
 */
import pg from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg, migrate, FerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function connected(): Promise<pg.Client> {
  const c = listened(new pg.Client({ connectionString: t.url }));
  await c.connect();
  return c;
}

async function forgetIndex(): Promise<void> {
  await t.db.execute('DROP INDEX IF EXISTS ferry_inbox_receipts_dead');
  await t.db.execute(`DELETE FROM ferry_schema_migrations WHERE name LIKE '0010%'`);
}

/** Waits until a ShareLock on ferry_inbox_receipts is requested and not granted (the migration waits). */
async function migrationWaiting(): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    const [waiting] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE c.relname = 'ferry_inbox_receipts' AND l.mode = 'ShareLock' AND NOT l.granted
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    if ((waiting?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the migration never waited for its lock');
}

it('does not queue writers behind a migration that waits for an old transaction, and applies it once that ends', async () => {
  await forgetIndex();
  const holder = await connected(); // a handler transaction that wrote a receipt and is still open
  const acceptor = await connected();
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  let migrating: Promise<unknown> | undefined;
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ferry_inbox_receipts IN ROW EXCLUSIVE MODE');
    migrating = migrate(fromPg(pool), { timeoutMs: 60_000 }).catch((error: unknown) => error);
    await migrationWaiting();
    // A new acceptance takes the lock an INSERT takes; bounded so that the test ends without the fix.
    await acceptor.query(`SET statement_timeout = '4s'`);
    await acceptor.query('BEGIN');
    const accepted = await acceptor.query('LOCK TABLE ferry_inbox_receipts IN ROW EXCLUSIVE MODE').then(
      () => 'accepted',
      (error: { code?: string }) => `refused ${error.code}`,
    );
    await acceptor.query('ROLLBACK');
    expect(accepted).toBe('accepted');
    await holder.query('ROLLBACK');
    const result = (await migrating) as { applied: string[] };
    expect(result.applied).toEqual([expect.stringMatching(/^0010_/)]);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await migrating;
    await Promise.all([holder.end(), acceptor.end(), pool.end()]);
  }
});

it('fails with FERRY_MIGRATION_FAILED naming the lock once its deadline passed, and applies nothing', async () => {
  await forgetIndex();
  const holder = await connected();
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ferry_inbox_receipts IN ROW EXCLUSIVE MODE');
    const error = await migrate(fromPg(pool), { timeoutMs: 3_000, lockTimeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ code: 'FERRY_MIGRATION_FAILED' });
    expect((error as Error).message).toMatch(/lock/);
    const [index] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class WHERE relname = 'ferry_inbox_receipts_dead'`,
    );
    expect(index?.n).toBe(0);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await Promise.all([holder.end(), pool.end()]);
  }
});

// A deadline is a length of time: a wall clock stepped back (NTP, an operator) while the migration
// waits must not lengthen it. On Date.now() it did: a step back of an hour meant an hour more of
// tries.
it('fails at its deadline though the wall clock was stepped back an hour while it waited', async () => {
  await forgetIndex();
  const holder = await connected();
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  const wall = Date.now.bind(Date);
  let clock: jest.SpyInstance<number, []> | undefined;
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ferry_inbox_receipts IN ROW EXCLUSIVE MODE');
    const migrating = migrate(fromPg(pool), { timeoutMs: 2_000, lockTimeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    await migrationWaiting();
    clock = jest.spyOn(Date, 'now').mockImplementation(() => wall() - 3_600_000);
    // Bounded so that the test ends without the fix: ten times the migration's deadline.
    const outcome = await Promise.race([
      migrating,
      new Promise((resolve) => setTimeout(() => resolve('still trying after 20 s'), 20_000)),
    ]);
    expect(outcome).toMatchObject({ code: 'FERRY_MIGRATION_FAILED' });
  } finally {
    clock?.mockRestore();
    await holder.query('ROLLBACK').catch(() => undefined);
    await Promise.all([holder.end(), pool.end()]);
  }
}, 60_000);

it('rebuilds the DEAD index when an operator’s CONCURRENTLY build of it did not finish (INVALID)', async () => {
  await forgetIndex();
  const holder = await connected(); // a writer still open: the CONCURRENTLY build waits for it
  const operator = await connected();
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ferry_inbox_receipts IN ROW EXCLUSIVE MODE');
    await operator.query(`SET statement_timeout = '1s'`);
    const cancelled = await operator
      .query(
        `CREATE INDEX CONCURRENTLY IF NOT EXISTS ferry_inbox_receipts_dead
           ON ferry_inbox_receipts (consumer, created_at) WHERE status = 'DEAD'`,
      )
      .then(
        () => 'built',
        (e: { code?: string }) => e.code,
      );
    expect(cancelled).toBe('57014');
    await holder.query('ROLLBACK');
    await migrate(fromPg(pool));
    const [index] = await t.db.query<{ valid: boolean }>(
      `SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'ferry_inbox_receipts_dead'::regclass`,
    );
    expect(index?.valid).toBe(true);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await Promise.all([holder.end(), operator.end(), pool.end()]);
  }
});

it('with timeoutMs 0 (no limit, as documented) tries again past its lock waits until the lock is free, and applies', async () => {
  await forgetIndex();
  const holder = await connected();
  const pool = listened(new pg.Pool({ connectionString: t.url, max: 2 }));
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ferry_inbox_receipts IN ROW EXCLUSIVE MODE');
    const migrating = migrate(fromPg(pool), { timeoutMs: 0, lockTimeoutMs: 200 }).catch(
      (error: unknown) => error,
    );
    await migrationWaiting();
    // Several lock waits of 200 ms pass; with no deadline the migrator keeps trying.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await holder.query('ROLLBACK');
    const result = (await migrating) as { applied: string[] };
    expect(result.applied).toEqual([expect.stringMatching(/^0010_/)]);
  } finally {
    await holder.query('ROLLBACK').catch(() => undefined);
    await Promise.all([holder.end(), pool.end()]);
  }
});
