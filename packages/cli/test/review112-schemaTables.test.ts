/**
 * Review 112: `ferry check`, `ferry health` (and checkSchema() / readiness, which they run) said
 * "schema is ready" on a database whose migration ledger is complete but whose ferry tables are
 * not: the operator audit table gone (renamed, left out of a restore), a column of the inbox
 * dropped. Every operator command then failed with FERRY_SCHEMA_NOT_READY and the hint "run ferry
 * migrate", which finds nothing to do: the check that says what is missing said nothing was.
 */
import { checkSchema, isFerryError } from '@ferry/core';
import { useCliDatabase } from './cliDatabase';

const database = useCliDatabase();
const cli = database.cli;

describe('review112: the schema check reads the tables ferry uses, not only the migration ledger', () => {
  it('a missing ferry table and a missing column are reported by check, health and checkSchema', async () => {
    const db = database.test.db;
    expect((await cli('check')).code).toBe(0);
    await db.execute('ALTER TABLE ferry_operator_audit RENAME TO review112_audit');
    await db.execute('ALTER TABLE ferry_inbox_receipts DROP COLUMN requeue_history');
    try {
      const check = await cli('check');
      expect(check.code).toBe(1);
      expect(check.errors.join('\n')).toMatch(/FERRY_SCHEMA_NOT_READY/);
      expect(check.errors.join('\n')).toMatch(/table:ferry_operator_audit/);
      expect(check.errors.join('\n')).toMatch(/column:ferry_inbox_receipts\.requeue_history/);
      const health = await cli('health');
      expect(health.code).toBe(1);
      expect(health.lines.find((line) => line.includes('schema'))).toMatch(/^down schema: /);
      const error: unknown = await checkSchema(db).catch((e: unknown) => e);
      expect(isFerryError(error, 'FERRY_SCHEMA_NOT_READY')).toBe(true);
      expect((error as Error).message).toMatch(/table:ferry_operator_audit/);
    } finally {
      await db.execute('ALTER TABLE review112_audit RENAME TO ferry_operator_audit');
    }
  });
});
