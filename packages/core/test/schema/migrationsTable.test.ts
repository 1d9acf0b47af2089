import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { checkSchema, exportSql, loadMigrationFiles, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { migrationFolder } from '../../../../test-support/migrationFolder';

const appFolder = (files: Record<string, string>): string => migrationFolder(files, 'ferry-app-mig-');

async function names(t: TestDatabase, table: string): Promise<string[]> {
  const rows = await t.db.query<{ name: string }>(`SELECT name FROM ${table} ORDER BY name`);
  return rows.map((r) => r.name);
}

describe("ferry's own migrations table", () => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  afterEach(async () => {
    await t.drop();
  });

  it("records ferry's migrations apart from an application's, so equal names do not collide", async () => {
    const ferry = loadMigrationFiles().map((f) => f.name);
    const app = appFolder({ '0001_outbox': 'CREATE TABLE app_orders (id int PRIMARY KEY);' });
    expect((await migrate(t.db)).applied).toEqual(ferry);
    expect(await migrate(t.db, { migrationsDir: app })).toEqual({
      applied: ['0001_outbox'],
      alreadyApplied: [],
    });
    expect(await names(t, 'ferry_schema_migrations')).toEqual(ferry);
    expect(await names(t, 'app_migrations')).toEqual(['0001_outbox']);
    await expect(checkSchema(t.db)).resolves.toEqual({ unrecognized: [] });
    await expect(checkSchema(t.db, { migrationsDir: app })).resolves.toEqual({ unrecognized: [] });
  });

  it('upgrades a database whose ferry and application migrations share the old ferry_migrations table', async () => {
    const app = appFolder({ '0100_orders': 'CREATE TABLE app_orders (id int PRIMARY KEY);' });
    // The layout ferry 0.1 left behind: both folders applied and recorded in ferry_migrations.
    await t.db.execute(
      'CREATE TABLE ferry_migrations (name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    for (const file of [...loadMigrationFiles(), ...loadMigrationFiles(app)]) {
      await t.db.transaction(async (tx) => {
        await tx.execute(file.sql);
        await tx.execute('INSERT INTO ferry_migrations (name, checksum) VALUES ($1, $2)', [
          file.name,
          file.checksum,
        ]);
      });
    }
    const ferry = loadMigrationFiles().map((f) => f.name);
    expect(await migrate(t.db)).toEqual({ applied: [], alreadyApplied: ferry });
    expect(await migrate(t.db, { migrationsDir: app })).toEqual({
      applied: [],
      alreadyApplied: ['0100_orders'],
    });
    expect(await names(t, 'ferry_schema_migrations')).toEqual(ferry);
    expect(await names(t, 'app_migrations')).toEqual(['0100_orders']);
    // Left untouched for an older ferry still running during a rolling deploy.
    expect(await names(t, 'ferry_migrations')).toEqual([...ferry, '0100_orders'].sort());
    await expect(checkSchema(t.db)).resolves.toEqual({ unrecognized: [] });
  });

  it.each(['order', 'user', 'select'])(
    'records an application folder in a table named like a reserved word (%s), and checks it',
    async (table) => {
      const app = appFolder({ '0001_a': 'CREATE TABLE app_a (id int PRIMARY KEY);' });
      // Before: CREATE TABLE IF NOT EXISTS order (...): a syntax error (42601) out of migrate.
      expect(await migrate(t.db, { migrationsDir: app, table })).toEqual({
        applied: ['0001_a'],
        alreadyApplied: [],
      });
      expect(await migrate(t.db, { migrationsDir: app, table })).toEqual({
        applied: [],
        alreadyApplied: ['0001_a'],
      });
      expect(await names(t, `"${table}"`)).toEqual(['0001_a']);
      await expect(checkSchema(t.db, { migrationsDir: app, table })).resolves.toEqual({ unrecognized: [] });
    },
  );

  it('rejects a table name that is not an identifier, or ferry’s own table for an application folder', async () => {
    const app = appFolder({ '0001_a': 'SELECT 1;' });
    await expect(migrate(t.db, { migrationsDir: app, table: 'x; DROP TABLE y' })).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
      option: 'table',
    });
    await expect(
      migrate(t.db, { migrationsDir: app, table: 'ferry_schema_migrations' }),
    ).rejects.toMatchObject({
      code: 'FERRY_CONFIG_INVALID',
    });
  });
});

describe('exportSql', () => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  afterEach(async () => {
    await t.drop();
  });

  it('is a script another tool can apply, after which ferry check passes and migrate has nothing to do', async () => {
    const client = listened(new Client({ connectionString: t.url }));
    await client.connect();
    try {
      await client.query(exportSql());
    } finally {
      await client.end();
    }
    await expect(checkSchema(t.db)).resolves.toEqual({ unrecognized: [] });
    expect((await migrate(t.db)).applied).toEqual([]);
  });

  it('prints only the migrations after a named one, and names an unknown one', () => {
    const [first, ...rest] = loadMigrationFiles();
    const sql = exportSql({ after: first?.name });
    expect(sql).not.toContain(`-- ${String(first?.name)}\n`);
    for (const file of rest) expect(sql).toContain(`-- ${file.name}\n`);
    expect(() => exportSql({ after: '9999_nope' })).toThrow(
      expect.objectContaining({ code: 'FERRY_MIGRATIONS_NOT_FOUND' }),
    );
  });
});
