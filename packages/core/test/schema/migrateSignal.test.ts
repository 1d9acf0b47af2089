/**
 * migrate's `signal`: once it aborts, no further migration starts; the one in flight finishes and
 * the result names those not reached (`notAttempted`), so a run stopped by an operator says what
 * is left. Never aborted, the result is as before (no `notAttempted`). A signal during a migration
 * is packages/cli/test/interruptedCommands.test.ts (`ferry migrate` and SIGINT / SIGTERM).
 */
import { migrate } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { migrationFolder } from '../../../../test-support/migrationFolder';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const files = (prefix: string) => ({
  '0001_first': `CREATE TABLE ${prefix}_first (n int);`,
  '0002_second': `CREATE TABLE ${prefix}_second (n int);`,
});

it('aborted before it starts, it applies nothing and names every migration not attempted', async () => {
  const migrationsDir = migrationFolder(files('sig_before'));
  const result = await migrate(t.db, { migrationsDir, table: 'sig_before', signal: AbortSignal.abort() });
  expect(result).toEqual({ applied: [], alreadyApplied: [], notAttempted: ['0001_first', '0002_second'] });
  const again = await migrate(t.db, {
    migrationsDir,
    table: 'sig_before',
    signal: new AbortController().signal,
  });
  expect(again).toEqual({ applied: ['0001_first', '0002_second'], alreadyApplied: [] });
});
