import type { SqlExecutor } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

/**
 * A migrated database for a cost test, with autovacuum off on `table`: its statistics change only
 * when a case analyzes, so what a case arranged (stale statistics, none) stays as arranged. The
 * table is unlogged: the cases fill it with tens of thousands of rows, and the work they count
 * (EXPLAIN ANALYZE's plan nodes and buffers) does not depend on the WAL.
 */
export type CostTable = 'outbox_events' | 'ferry_inbox_receipts';

export async function costDatabase(table: CostTable): Promise<TestDatabase> {
  const database = await createTestDatabase();
  await database.db.execute(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  await database.db.execute(`ALTER TABLE ${table} SET UNLOGGED`);
  return database;
}

/**
 * Empties `table`; with `forget`, also drops its column statistics and row count, as before
 * autovacuum's first analysis.
 */
export async function emptyTable(db: SqlExecutor, table: CostTable, forget: boolean): Promise<void> {
  await db.execute(`TRUNCATE ${table}`);
  if (!forget) return;
  await db.execute(`DELETE FROM pg_statistic WHERE starelid = '${table}'::regclass`);
  await db.execute(`UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = '${table}'::regclass`);
}
