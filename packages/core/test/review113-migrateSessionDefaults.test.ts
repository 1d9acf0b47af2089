/**
 * Review 113: ferry's migrator on a database whose session defaults are not PostgreSQL's.
 *
 * Defect: migrate's transactions ran at the database's default isolation. Under REPEATABLE READ or
 * SERIALIZABLE the snapshot is taken by the transaction's first statement, the advisory lock that
 * serializes migrators: a second migrator (two pods starting together) that waited for the lock
 * then read the migrations table as it was before the first one committed, found its migration
 * unapplied and ran it again (`relation "t1" already exists`, or a duplicate row in the migrations
 * table): one of two pods failed to start on an empty database. Under
 * `default_transaction_read_only = on` (set on a role or database that is also written through
 * ferry's own pinned transactions) migrate failed with "cannot execute … in a read-only
 * transaction".
 *
 * Also a database or role with `lock_timeout` set (a common guard against DDL queues).
 *
 * Defect: the advisory lock that serializes migrators waited under that lock_timeout: a second
 * pod starting while the first one ran a migration longer than it (an index build on a large
 * table) failed at once with a retriable FERRY_DATABASE_UNAVAILABLE ("canceling statement due to
 * lock timeout") instead of waiting for the other migrator within its own deadline (`timeoutMs`),
 * as MigrateOptions documents ("Concurrent migrators wait for each other here, under the
 * transaction's own deadline only").
 *
 * Contract: MigrateOptions / README "concurrent migrators serialize and each file runs once";
 * TransactionOptions.isolation 'read committed' (READ WRITE where the client can say so) is the
 * one home for statements that must not depend on the session's defaults (review 29).
 */
import { Client, Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { fromPg, fromPrisma, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { migrationFolder } from '../../../test-support/migrationFolder';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterEach(async () => {
  await t.drop();
});

function sleepyFolder(): { dir: string; names: string[] } {
  const files: Record<string, string> = {};
  for (let i = 1; i <= 6; i += 1) {
    files[`000${i}_m`] = `CREATE TABLE t${i} (a int); INSERT INTO t${i} VALUES (1); SELECT pg_sleep(0.1);`;
  }
  return { dir: migrationFolder(files), names: Object.keys(files).sort() };
}

it.each(['repeatable read', 'serializable'])(
  'two migrators at once apply each file once when the database defaults to %s',
  async (level) => {
    await t.db.execute(`ALTER DATABASE ${t.name} SET default_transaction_isolation = '${level}'`);
    const { dir, names } = sleepyFolder();
    // New clients: the database's default applies to new sessions.
    const a = fromPrisma(t.newClient());
    const b = fromPrisma(t.newClient());
    const [ra, rb] = await Promise.all([
      migrate(a, { migrationsDir: dir }),
      migrate(b, { migrationsDir: dir }),
    ]);
    expect([...ra.applied, ...rb.applied].sort()).toEqual(names);
    expect([...ra.alreadyApplied, ...rb.alreadyApplied].sort()).toEqual(names);
    // And ferry's own migrations, on the same database, as two pods starting.
    const [fa, fb] = await Promise.all([migrate(a), migrate(b)]);
    expect([...fa.applied, ...fb.applied].sort()).toEqual(
      [...fa.alreadyApplied, ...fb.alreadyApplied].sort(),
    );
  },
);

it('applies ferry’s migrations through node-postgres (as ferry migrate) when the database defaults to read-only transactions', async () => {
  await t.db.execute(`ALTER DATABASE ${t.name} SET default_transaction_read_only = on`);
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  try {
    const db = fromPg(pool);
    const result = await migrate(db);
    expect(result.applied.length).toBeGreaterThan(0);
    expect(await migrate(db)).toMatchObject({ applied: [] });
  } finally {
    await pool.end();
  }
});

it('a migrator waits for another one past the database’s lock_timeout, then finds its work done', async () => {
  await t.db.execute(`ALTER DATABASE ${t.name} SET lock_timeout = '200ms'`);
  const dir = migrationFolder({ '0001_slow': 'CREATE TABLE slow (a int); SELECT pg_sleep(1.5);' });
  const first = migrate(fromPrisma(t.newClient()), { migrationsDir: dir });
  // The second starts once the first holds the lock inside its migration.
  const watcher = listened(new Client({ connectionString: t.url }));
  await watcher.connect();
  try {
    for (let i = 0; i < 200; i += 1) {
      const { rows } = await watcher.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(1.5)%' AND pid <> pg_backend_pid()",
      );
      if (rows[0]?.n !== '0') break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    await watcher.end();
  }
  const second = await migrate(fromPrisma(t.newClient()), { migrationsDir: dir }).catch((e: unknown) => e);
  expect(await first).toEqual({ applied: ['0001_slow'], alreadyApplied: [] });
  expect(second).toEqual({ applied: [], alreadyApplied: ['0001_slow'] });
});
