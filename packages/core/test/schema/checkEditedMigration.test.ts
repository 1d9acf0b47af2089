// Review finding (failed first): checkSchema said the schema was ready for a folder whose applied
// migration had been edited, while migrate refused the same folder with
// FERRY_MIGRATION_CHECKSUM_MISMATCH (a CI gate on check passed, the deploy's migrate stopped).
// check now reports the mismatch as migrate does; and its NOT_READY text for an application's
// folder names that folder and the migrate call it needs.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkSchema, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { migrationFolder as folder } from '../../../../test-support/migrationFolder';

let t: TestDatabase;
beforeEach(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterEach(async () => {
  await t.drop();
});

describe('checkSchema and an applied migration edited afterwards', () => {
  it('fails with the error migrate gives for the same folder', async () => {
    const dir = folder({ '0001_init': 'CREATE TABLE edited_app (id int);' });
    await migrate(t.db, { migrationsDir: dir });
    writeFileSync(
      path.join(dir, '0001_init', 'migration.sql'),
      'CREATE TABLE edited_app (id int);\n-- edited',
    );
    const fromMigrate = await migrate(t.db, { migrationsDir: dir }).catch((e: unknown) => e);
    const fromCheck = await checkSchema(t.db, { migrationsDir: dir }).catch((e: unknown) => e);
    expect(fromMigrate).toMatchObject({
      code: 'FERRY_MIGRATION_CHECKSUM_MISMATCH',
      details: { migration: '0001_init' },
    });
    expect(fromCheck).toMatchObject({
      code: 'FERRY_MIGRATION_CHECKSUM_MISMATCH',
      message: (fromMigrate as Error).message,
      details: { migration: '0001_init' },
    });
  });

  it("names an application's folder and the migrate call it needs when it is behind", async () => {
    const dir = folder({ '0001_init': 'CREATE TABLE behind_app (id int);' });
    const error = await checkSchema(t.db, { migrationsDir: dir, table: 'behind_migrations' }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'FERRY_SCHEMA_NOT_READY' });
    expect((error as Error).message).not.toContain("ferry's schema");
    expect((error as Error).message).toContain(`--migrations-dir ${dir} --table behind_migrations`);
  });
});
