/**
 * Review 115: the migrations table records a migration this ferry does not ship.
 *
 * A newer ferry migrated the database, then the deploy was rolled back (or one older pod still
 * runs): its ledger has rows no file of this version names. migrate() and checkSchema() ignored
 * them without a word, so an operator running `ferry migrate` / `ferry check` from the older
 * version was told all was in place while the schema was a newer one than the code expects.
 *
 * Contract now: both report them (`MigrateResult.unrecognized`, `CheckSchemaResult.unrecognized`,
 * in name order) and neither fails on them: a rollback mid-deploy keeps starting.
 */
import { checkSchema, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { migrationFolder } from '../../../test-support/migrationFolder';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  await t.drop();
});

it("ferry's ledger: migrate and checkSchema name rows of a newer ferry and still succeed", async () => {
  await t.db.execute(
    `INSERT INTO ferry_schema_migrations (name, checksum) VALUES ('9999_newer', 'x'), ('9998_newer', 'y')`,
  );
  const result = await migrate(t.db);
  expect(result.applied).toEqual([]);
  expect(result.unrecognized).toEqual(['9998_newer', '9999_newer']);
  await expect(checkSchema(t.db)).resolves.toEqual({ unrecognized: ['9998_newer', '9999_newer'] });
});

it('none recorded beyond the files: no unrecognized on migrate, an empty list on check', async () => {
  const result = await migrate(t.db);
  expect(result).not.toHaveProperty('unrecognized');
  await expect(checkSchema(t.db)).resolves.toEqual({ unrecognized: [] });
});

it("an application's folder: rows its files do not name are reported the same way", async () => {
  const dir = migrationFolder({ '0001_a': 'CREATE TABLE review115_a (id int);' });
  await migrate(t.db, { migrationsDir: dir, table: 'review115_ledger' });
  await t.db.execute(`INSERT INTO review115_ledger (name, checksum) VALUES ('0002_b', 'z')`);
  await expect(migrate(t.db, { migrationsDir: dir, table: 'review115_ledger' })).resolves.toMatchObject({
    unrecognized: ['0002_b'],
  });
  await expect(checkSchema(t.db, { migrationsDir: dir, table: 'review115_ledger' })).resolves.toEqual({
    unrecognized: ['0002_b'],
  });
});
