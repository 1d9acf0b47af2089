import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

describe('ferry CLI', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await t.drop();
  });

  it('check fails with FERRY_SCHEMA_NOT_READY before migrate and passes after', async () => {
    const before = captureIo();
    expect(await runCli(['check', '--database-url', t.url], before)).toBe(1);
    expect(before.errors.join('\n')).toContain('FERRY_SCHEMA_NOT_READY');

    const migrated = captureIo();
    expect(await runCli(['migrate', '--database-url', t.url], migrated)).toBe(0);
    expect(migrated.lines.at(-1)).toMatch(/^ferry migrate: \d+ applied, 0 already applied$/);

    const again = captureIo();
    expect(await runCli(['migrate', `--database-url=${t.url}`], again)).toBe(0);
    expect(again.lines.at(-1)).toMatch(/^ferry migrate: 0 applied, \d+ already applied$/);

    const after = captureIo();
    expect(await runCli(['check', '--database-url', t.url], after)).toBe(0);
  });

  it('takes the database from FERRY_DATABASE_URL', async () => {
    const io = captureIo();
    expect(await runCli(['check'], io, { FERRY_DATABASE_URL: t.url })).toBe(0);
  });

  it('exits 2 with usage on an unknown command', async () => {
    const io = captureIo();
    expect(await runCli(['frobnicate'], io)).toBe(2);
    expect(io.errors.join('\n')).toContain('usage: ferry');
  });

  it('reports an unreachable database as a failure, not a crash', async () => {
    const io = captureIo();
    expect(await runCli(['migrate', '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io)).toBe(1);
    expect(io.errors.join('\n')).toContain('ferry migrate:');
  });

  it('prints the usage with every command on --help and exits 0', async () => {
    const io = captureIo();
    expect(await runCli(['outbox', 'retry', '--help'], io)).toBe(0);
    const usage = io.lines.join('\n');
    for (const name of [
      'migrate',
      'check',
      'outbox stats',
      'outbox list',
      'outbox retry',
      'outbox mark-failed',
      'inbox stats',
      'inbox list',
      'inbox requeue',
    ]) {
      expect(usage).toContain(`  ${name}`);
    }
  });
});
