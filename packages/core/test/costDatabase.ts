import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

/**
 * A migrated database for a cost test, with autovacuum off on `table`: its statistics change only
 * when a case analyzes, so what a case arranged (stale statistics, none) stays as arranged.
 */
export async function costDatabase(table: 'outbox_events' | 'ferry_inbox_receipts'): Promise<TestDatabase> {
  const database = await createTestDatabase();
  await database.db.execute(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  return database;
}
