/**
 * Review 113: a database or role with `lock_timeout` set (a common guard against DDL queues).
 *
 * Defect: the advisory lock that serializes migrators waited under that lock_timeout: a second
 * pod starting while the first one ran a migration longer than it (an index build on a large
 * table) failed at once with a retriable FERRY_DATABASE_UNAVAILABLE ("canceling statement due to
 * lock timeout") instead of waiting for the other migrator within its own deadline (`timeoutMs`),
 * as MigrateOptions documents ("Concurrent migrators wait for each other here, under the
 * transaction's own deadline only").
 */
import { Client } from 'pg';
import { fromPrisma, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { migrationFolder } from '../../../test-support/migrationFolder';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterEach(async () => {
  await t.drop();
});

it('a migrator waits for another one past the database’s lock_timeout, then finds its work done', async () => {
  await t.db.execute(`ALTER DATABASE ${t.name} SET lock_timeout = '200ms'`);
  const dir = migrationFolder({ '0001_slow': 'CREATE TABLE slow (a int); SELECT pg_sleep(1.5);' });
  const first = migrate(fromPrisma(t.newClient()), { migrationsDir: dir });
  // The second starts once the first holds the lock inside its migration.
  const watcher = new Client({ connectionString: t.url });
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
