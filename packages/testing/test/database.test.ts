import { Pool } from 'pg';
import { dropDatabase, recreateDatabase } from '../src';
import { adminQuery, scratchDatabaseUrl, serverUrl } from '../../../test-support/database';

// A pg pool's end() resolves before its clients' sockets close. Dropping the database WITH (FORCE)
// right then terminated backends under clients still ending, and the pool emitted 'error' (an
// uncaught exception in a test process without a listener): 16 of 20 rounds did on main. The
// databases are empty (CREATE DATABASE, no migrations: ten migrated databases cost PostgreSQL most
// of this file's CPU): the race is in the drop, and recreateDatabase is exercised by the next test.
it('drops a database right after pool.end() without terminating connections still closing', async () => {
  const errors: unknown[] = [];
  for (let round = 0; round < 10; round += 1) {
    const url = scratchDatabaseUrl(`ferry_drop_${round}`);
    await adminQuery(`CREATE DATABASE ${new URL(url).pathname.slice(1)}`);
    const pool = new Pool({ connectionString: url, max: 4 });
    pool.on('error', (error) => errors.push(error));
    await Promise.all([1, 2, 3, 4].map(() => pool.query('SELECT pg_sleep(0.01)')));
    // Not awaited: the drop meets the clients while they are closing, as it does under load.
    const ending = pool.end();
    await dropDatabase(url);
    await ending;
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(errors).toEqual([]);
}, 60_000);

// Review 34: a role that may not connect to `postgres` drops and creates through another database.
it('connects through the database `through` names, and refuses an unknown option', async () => {
  const url = scratchDatabaseUrl('ferry_through');
  const base = new URL(serverUrl());
  const baseName = base.pathname.slice(1);
  await recreateDatabase(url, { through: baseName });
  await dropDatabase(url, { through: base.toString() });
  const missing = await dropDatabase(url, { through: 'ferry_no_such_database' }).catch((e: unknown) => e);
  expect(missing).toMatchObject({ code: 'FERRY_CONFIG_INVALID' });
  expect(String((missing as Error).message)).toMatch(/ferry_no_such_database/);
  await expect(dropDatabase(url, { via: 'postgres' } as never)).rejects.toMatchObject({
    code: 'FERRY_CONFIG_INVALID',
  });
});
