// Review finding (failed first): `ferry check` printed "schema is ready" (exit 0) for a folder
// whose applied migration had been edited, while `ferry migrate` refused it with
// FERRY_MIGRATION_CHECKSUM_MISMATCH. check now fails the same way.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { migrationFolder } from '../../../test-support/migrationFolder';
import { captureIo } from './io';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await t.drop();
});

it('ferry check refuses a folder whose applied migration was edited, as ferry migrate does', async () => {
  const dir = migrationFolder({ '0001_init': 'CREATE TABLE cli_edited (id int);\n' }, 'ferry-cli-edited-');
  const file = path.join(dir, '0001_init', 'migration.sql');
  const folderArgs = ['--migrations-dir', dir, '--database-url', t.url];
  expect(await runCli(['migrate', ...folderArgs], captureIo())).toBe(0);
  appendFileSync(file, '-- edited after it was applied\n');

  const migrateIo = captureIo();
  expect(await runCli(['migrate', ...folderArgs], migrateIo)).toBe(1);
  const checkIo = captureIo();
  expect(await runCli(['check', ...folderArgs], checkIo)).toBe(1);
  expect(checkIo.lines).toEqual([]);
  const withoutCommand = (lines: readonly string[]) => lines.map((l) => l.replace(/^ferry \w+: /, ''));
  expect(withoutCommand(checkIo.errors)).toEqual(withoutCommand(migrateIo.errors));
  expect(checkIo.errors.join('\n')).toContain('FERRY_MIGRATION_CHECKSUM_MISMATCH');
});
