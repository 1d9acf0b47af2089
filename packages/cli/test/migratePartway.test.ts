/**
 * `ferry migrate` failing at migration N after it applied migrations 1..N-1 in the same run: the
 * answer names the ones applied before the error (text: `applied NAME` lines on stdout before the
 * error on stderr; --json: `applied` beside `error`), and the ones not reached (`notAttempted`), so
 * the operator knows what changed. The exit code is the failure's (1). On HEAD only the error was
 * printed. The same facts are on core's error (`details.applied`, `details.notAttempted`).
 */
import { rmSync } from 'node:fs';
import { isFerryError, migrate } from '@ferry/core';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { migrationFolder } from '../../../test-support/migrationFolder';
import { captureIo } from './io';

jest.setTimeout(60_000);

let t: TestDatabase;
let folder: string;
beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  await t.db.execute('DROP TABLE IF EXISTS partway_a, partway_b, app_migrations');
  folder = migrationFolder({
    '001_a': 'CREATE TABLE partway_a (id int)',
    '002_b': 'CREATE TABLE partway_b (id int)',
    '003_bad': 'CREATE TABLE partway_a (id int)',
    '004_later': 'CREATE TABLE partway_later (id int)',
  });
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));
afterAll(async () => {
  await t.drop();
});

it('core: the error names the migrations applied before the failure and those not attempted', async () => {
  const error = await migrate(t.db, { migrationsDir: folder }).then(
    () => 'no error',
    (thrown: unknown) => thrown,
  );
  expect(isFerryError(error, 'FERRY_MIGRATION_FAILED')).toBe(true);
  expect((error as { details: unknown }).details).toMatchObject({
    migration: '003_bad',
    applied: ['001_a', '002_b'],
    notAttempted: ['004_later'],
  });
});

it('text: the applied migrations are printed before the error, exit 1', async () => {
  const io = captureIo();
  const code = await runCli(['migrate', '--migrations-dir', folder, '--database-url', t.url], io, {});
  expect(code).toBe(1);
  expect(io.lines.filter((line) => line.startsWith('applied '))).toEqual(['applied 001_a', 'applied 002_b']);
  expect(io.lines).toContain('not_attempted 004_later');
  expect(io.errors.join('\n')).toContain('FERRY_MIGRATION_FAILED');
});

it('--json: the answer carries applied and notAttempted beside the error, exit 1', async () => {
  const io = captureIo();
  const code = await runCli(
    ['migrate', '--migrations-dir', folder, '--database-url', t.url, '--json'],
    io,
    {},
  );
  expect(code).toBe(1);
  expect(JSON.parse(io.lines.join('\n'))).toMatchObject({
    applied: ['001_a', '002_b'],
    notAttempted: ['004_later'],
    error: { code: 'FERRY_MIGRATION_FAILED' },
  });
});
