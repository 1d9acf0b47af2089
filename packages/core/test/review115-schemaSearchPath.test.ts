/**
 * Review 115: checkSchema with ferry's tables in a schema that is not the first of search_path.
 *
 * ferry names its tables unqualified everywhere (no schema option): the connection's search_path
 * decides which table a statement reaches, and migrate creates its tables in the first schema of
 * it. checkSchema found the migrations table through search_path (to_regclass) but read the
 * columns of ferry's tables in current_schema() only.
 *
 * Defect: with ferry migrated into schema `ferry` and an application connecting with
 * `search_path = public, ferry` (every ferry statement reaches ferry.outbox_events), checkSchema,
 * readiness and `Inbox.initialize()` said `table:outbox_events`, `table:ferry_inbox_receipts`, …
 * missing: a pod that works was never ready. The other way round, a stray table of the same name in
 * current_schema() was read while the statements reach it too: both now read the table
 * search_path resolves, as every ferry statement does.
 */
import { Pool } from 'pg';
import { checkSchema, createHealth, fromPg, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
const pools: Pool[] = [];
beforeEach(async () => {
  t = await createTestDatabase({ migrate: false });
  await t.db.execute('CREATE SCHEMA ferry');
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
  await t.drop();
});

function poolWith(searchPath: string): Pool {
  const pool = new Pool({ connectionString: t.url, max: 2, options: `-c search_path=${searchPath}` });
  pool.on('error', () => undefined);
  pools.push(pool);
  return pool;
}

it('checkSchema and readiness find ferry tables in a later search_path schema', async () => {
  await migrate(fromPg(poolWith('ferry')));
  const app = fromPg(poolWith('public,ferry'));
  await expect(checkSchema(app)).resolves.toEqual({ unrecognized: [] });
  const health = createHealth({ db: app });
  await expect(health.readiness()).resolves.toMatchObject({ status: 'up' });
});

it('a column dropped from the table search_path reaches is still reported', async () => {
  await migrate(fromPg(poolWith('ferry')));
  await t.db.execute('ALTER TABLE ferry.ferry_operator_audit DROP COLUMN reason');
  await expect(checkSchema(fromPg(poolWith('public,ferry')))).rejects.toMatchObject({
    code: 'FERRY_SCHEMA_NOT_READY',
    missing: ['column:ferry_operator_audit.reason'],
  });
});

it('a table of an application (tables) is read where search_path finds it, case kept', async () => {
  await t.db.execute('CREATE TABLE ferry."Orders" (id int)');
  const app = fromPg(poolWith('public,ferry'));
  await expect(
    checkSchema(app, { tables: { Orders: ['id'] }, requireAllMigrations: false }),
  ).resolves.toEqual({ unrecognized: [] });
  await expect(
    checkSchema(app, { tables: { orders: ['id'] }, requireAllMigrations: false }),
  ).rejects.toMatchObject({ missing: ['table:orders'] });
});
