import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkSchema, FerryError, FerrySchemaError, fromPrisma, migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { migrationFolder as migrationsDir } from '../../../../test-support/migrationFolder';

async function tableExists(t: TestDatabase, table: string): Promise<boolean> {
  const [row] = await t.db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
    table,
  ]);
  return row?.present ?? false;
}

async function appliedNames(t: TestDatabase): Promise<string[]> {
  const rows = await t.db.query<{ name: string }>('SELECT name FROM app_migrations ORDER BY name');
  return rows.map((r) => r.name);
}

describe('migrate', () => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  afterEach(async () => {
    await t.drop();
  });

  it('applies every file in name order on a fresh database and nothing on a re-run', async () => {
    const dir = migrationsDir({
      '0002_second': 'ALTER TABLE first_table ADD COLUMN b int;',
      '0001_first': 'CREATE TABLE first_table (a int); CREATE INDEX first_idx ON first_table (a);',
    });
    expect(await migrate(t.db, { migrationsDir: dir })).toEqual({
      applied: ['0001_first', '0002_second'],
      alreadyApplied: [],
    });
    expect(await migrate(t.db, { migrationsDir: dir })).toEqual({
      applied: [],
      alreadyApplied: ['0001_first', '0002_second'],
    });
    expect(await appliedNames(t)).toEqual(['0001_first', '0002_second']);
  });

  it('applies each file exactly once when two processes migrate at the same time', async () => {
    const files: Record<string, string> = {};
    for (let i = 1; i <= 6; i += 1) {
      files[`000${i}_m`] = `CREATE TABLE t${i} (a int); INSERT INTO t${i} VALUES (1); SELECT pg_sleep(0.05);`;
    }
    const dir = migrationsDir(files);
    const other = fromPrisma(t.newClient());
    const [a, b] = await Promise.all([
      migrate(t.db, { migrationsDir: dir }),
      migrate(other, { migrationsDir: dir }),
    ]);
    expect([...a.applied, ...b.applied].sort()).toEqual(Object.keys(files).sort());
    expect(a.applied.filter((name) => b.applied.includes(name))).toEqual([]);
    for (let i = 1; i <= 6; i += 1) {
      const [row] = await t.db.query<{ n: bigint }>(`SELECT count(*) AS n FROM t${i}`);
      expect(row?.n).toBe(1n);
    }
  });

  it('rolls back a failing file, keeps the ones before it and names the file', async () => {
    const dir = migrationsDir({
      '0001_ok': 'CREATE TABLE ok_table (a int);',
      '0002_bad': 'CREATE TABLE half_table (a int); SELECT no_such_function();',
      '0003_after': 'CREATE TABLE after_table (a int);',
    });
    const error = await migrate(t.db, { migrationsDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ code: 'FERRY_MIGRATION_FAILED', details: { migration: '0002_bad' } });
    expect((error as Error).message).toContain('0002_bad');
    expect(await tableExists(t, 'ok_table')).toBe(true);
    expect(await tableExists(t, 'half_table')).toBe(false);
    expect(await tableExists(t, 'after_table')).toBe(false);
    expect(await appliedNames(t)).toEqual(['0001_ok']);
  });

  it('refuses to go on when an applied file was edited', async () => {
    const dir = migrationsDir({ '0001_ok': 'CREATE TABLE ok_table (a int);' });
    await migrate(t.db, { migrationsDir: dir });
    writeFileSync(path.join(dir, '0001_ok', 'migration.sql'), 'CREATE TABLE ok_table (a int, b int);');
    await expect(migrate(t.db, { migrationsDir: dir })).rejects.toMatchObject({
      code: 'FERRY_MIGRATION_CHECKSUM_MISMATCH',
    });
  });

  it('reports a missing migrations folder with a typed error', async () => {
    await expect(migrate(t.db, { migrationsDir: '/nonexistent/ferry' })).rejects.toMatchObject({
      code: 'FERRY_MIGRATIONS_NOT_FOUND',
    });
  });
});

describe('checkSchema', () => {
  let t: TestDatabase;
  const dir = migrationsDir({ '0001_widgets': 'CREATE TABLE widgets (id int PRIMARY KEY, name text);' });
  beforeEach(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  afterEach(async () => {
    await t.drop();
  });

  it('lists the missing table and migration with FERRY_SCHEMA_NOT_READY and changes nothing', async () => {
    const error = await checkSchema(t.db, { migrationsDir: dir, tables: { widgets: ['id'] } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerrySchemaError);
    expect(error).toMatchObject({
      code: 'FERRY_SCHEMA_NOT_READY',
      missing: ['table:widgets', 'table:app_migrations', 'migration:0001_widgets'],
    });
    expect(await tableExists(t, 'app_migrations')).toBe(false);
  });

  it('names a missing column', async () => {
    await migrate(t.db, { migrationsDir: dir });
    await expect(
      checkSchema(t.db, { migrationsDir: dir, tables: { widgets: ['id', 'name', 'colour'] } }),
    ).rejects.toMatchObject({ missing: ['column:widgets.colour'] });
  });

  it('passes once migrated', async () => {
    await migrate(t.db, { migrationsDir: dir });
    await expect(
      checkSchema(t.db, { migrationsDir: dir, tables: { widgets: ['id', 'name'] } }),
    ).resolves.toEqual({ unrecognized: [] });
  });
});
