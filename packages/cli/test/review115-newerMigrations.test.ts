/**
 * Review 115: `ferry migrate` and `ferry check` from an older ferry than the one that migrated the
 * database (a rollback mid-deploy) said all was in place, silent on the ledger's rows this version
 * does not ship. They name them now (a note, and `unrecognized` under --json) and still exit 0.
 */
import { useCliDatabase } from './cliDatabase';

const database = useCliDatabase();
const cli = database.cli;

describe('review115: migrations recorded by a newer ferry', () => {
  it('migrate and check name them, exit 0', async () => {
    const db = database.test.db;
    await db.execute(`INSERT INTO ferry_schema_migrations (name, checksum) VALUES ('9999_review115', 'x')`);
    try {
      const migrated = await cli('migrate');
      expect(migrated.code).toBe(0);
      expect([...migrated.lines, ...migrated.errors].join('\n')).toMatch(/9999_review115/);
      const check = await cli('check');
      expect(check.code).toBe(0);
      expect([...check.lines, ...check.errors].join('\n')).toMatch(/9999_review115/);
      const json = await cli('check', '--json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.lines.join('\n'))).toEqual({ ready: true, unrecognized: ['9999_review115'] });
      const migratedJson = await cli('migrate', '--json');
      expect(JSON.parse(migratedJson.lines.join('\n'))).toMatchObject({ unrecognized: ['9999_review115'] });
    } finally {
      await db.execute(`DELETE FROM ferry_schema_migrations WHERE name = '9999_review115'`);
    }
  });
});
