import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
  // A migration that fails unless its session's statement_timeout is the one expected.
  const expecting = (timeout: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ferry-cli-mig-'));
    mkdirSync(path.join(dir, '0001_expect'));
    writeFileSync(
      path.join(dir, '0001_expect', 'migration.sql'),
      `DO $$ BEGIN IF current_setting('statement_timeout') <> '${timeout}' THEN
         RAISE EXCEPTION 'statement_timeout is %', current_setting('statement_timeout'); END IF; END $$;`,
    );
    return dir;
  };
  const table = (name: string) => ['--table', name];

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

  it('gives migrate the longest deadline by default (an index build, the migration lock), and a shorter one only when asked', async () => {
    const byDefault = captureIo();
    const code = await runCli(
      ['migrate', '--migrations-dir', expecting('1h'), ...table('cli_mig_default'), '--database-url', t.url],
      byDefault,
    );
    expect({ code, errors: byDefault.errors }).toEqual({ code: 0, errors: [] });
    // A global option before the command, and the environment, still choose the deadline.
    const flag = captureIo();
    expect(
      await runCli(
        [
          '--statement-timeout',
          '5s',
          'migrate',
          '--migrations-dir',
          expecting('5s'),
          ...table('cli_mig_flag'),
        ],
        flag,
        { FERRY_DATABASE_URL: t.url },
      ),
    ).toBe(0);
    const fromEnv = captureIo();
    expect(
      await runCli(['migrate', '--migrations-dir', expecting('7s'), ...table('cli_mig_env')], fromEnv, {
        FERRY_DATABASE_URL: t.url,
        FERRY_STATEMENT_TIMEOUT: '7s',
      }),
    ).toBe(0);
  });

  it('migrate takes --statement-timeout 0 (no deadline, as migrate timeoutMs: 0) and deadlines beyond 1h (an index build on a big table); other commands keep 100ms..1h', async () => {
    const migrateWith = async (timeout: string, name: string, env: NodeJS.ProcessEnv = {}) => {
      const io = captureIo();
      const code = await runCli(
        ['migrate', '--migrations-dir', expecting(timeout), ...table(name), '--database-url', t.url],
        io,
        env,
      );
      return { code, errors: io.errors };
    };
    expect(await migrateWith('0', 'cli_mig_none', { FERRY_STATEMENT_TIMEOUT: '0' })).toEqual({
      code: 0,
      errors: [],
    });
    expect(await migrateWith('2h', 'cli_mig_env_2h', { FERRY_STATEMENT_TIMEOUT: '2h' })).toEqual({
      code: 0,
      errors: [],
    });
    const flag = captureIo();
    const flagCode = await runCli(
      [
        '--statement-timeout',
        '0',
        'migrate',
        '--migrations-dir',
        expecting('0'),
        ...table('cli_mig_flag_none'),
        '--database-url',
        t.url,
      ],
      flag,
      {},
    );
    expect({ code: flagCode, errors: flag.errors }).toEqual({ code: 0, errors: [] });
    const long = captureIo();
    const longCode = await runCli(
      [
        'migrate',
        '--statement-timeout',
        '12h',
        '--migrations-dir',
        expecting('12h'),
        ...table('cli_mig_12h'),
      ],
      long,
      { FERRY_DATABASE_URL: t.url },
    );
    expect({ code: longCode, errors: long.errors }).toEqual({ code: 0, errors: [] });

    // Past what PostgreSQL's statement_timeout (and migrate's timeoutMs) can hold: refused.
    const tooLong = captureIo();
    expect(
      await runCli(['migrate', '--statement-timeout', '30d', '--database-url', t.url], tooLong, {}),
    ).toBe(2);
    expect(tooLong.errors[0]).toBe(
      'ferry migrate: FERRY_USAGE: --statement-timeout must be 0 (no deadline) or a duration up to 2147483647ms, got "30d"',
    );
    // The admin commands and check keep the statement deadline bounds of their core options.
    for (const [source, argv, env] of [
      ['--statement-timeout', ['check', '--statement-timeout', '0'], {}],
      ['--statement-timeout', ['outbox', 'stats', '--statement-timeout', '2h'], {}],
      ['FERRY_STATEMENT_TIMEOUT', ['check'], { FERRY_STATEMENT_TIMEOUT: '0' }],
    ] as const) {
      const io = captureIo();
      expect(await runCli([...argv, '--database-url', t.url], io, env)).toBe(2);
      expect(io.errors[0]).toMatch(
        new RegExp(`FERRY_USAGE: ${source} must be a duration from 100ms to 1h, got "(0|2h)"$`),
      );
    }
  });

  it('takes the database from FERRY_DATABASE_URL', async () => {
    const io = captureIo();
    expect(await runCli(['check'], io, { FERRY_DATABASE_URL: t.url })).toBe(0);
  });

  it('without a database URL, a command that needs the database is a usage error; one that does not runs', async () => {
    const io = captureIo();
    expect(await runCli(['migrate'], io, {})).toBe(2);
    expect(io.errors[0]).toBe(
      'ferry migrate: FERRY_USAGE: no database: pass --database-url URL or set DATABASE_URL (or FERRY_DATABASE_URL)',
    );
    expect(await runCli(['schema'], captureIo(), {})).toBe(0);
  });

  it('exits 2 with FERRY_USAGE on an unknown command', async () => {
    const io = captureIo();
    expect(await runCli(['frobnicate'], io)).toBe(2);
    expect(io.errors.join('\n')).toContain("ferry frobnicate: FERRY_USAGE: unknown command 'frobnicate'");
  });

  it('reports an unreachable database as a failure, not a crash', async () => {
    const io = captureIo();
    expect(await runCli(['migrate', '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io)).toBe(1);
    expect(io.errors[0]).toMatch(/^ferry migrate: FERRY_DATABASE_UNAVAILABLE: /);
    expect(io.errors[1]).toContain('hint: check --database-url');
  });

  it('lists every command in the help of its group and exits 0', async () => {
    const groups: Record<string, string[]> = {
      '': ['migrate', 'check', 'schema', 'sql', 'outbox', 'inbox', 'audit', 'health', 'top|watch'],
      outbox: ['stats', 'list', 'show', 'retry', 'mark-failed', 'release', 'purge-sent'],
      inbox: ['stats', 'list', 'show', 'requeue', 'replay', 'release', 'purge-payloads'],
      audit: ['list'],
    };
    for (const [group, names] of Object.entries(groups)) {
      const io = captureIo();
      expect(await runCli([...(group ? [group] : []), '--help'], io)).toBe(0);
      const usage = io.lines.join('\n');
      for (const name of names) expect(usage).toMatch(new RegExp(`^  ${name.replace('|', '\\|')} `, 'm'));
    }
  });
});

describe('ferry schema and ferry sql', () => {
  it("prints ferry's Prisma models without a generator or datasource", async () => {
    const io = captureIo();
    expect(await runCli(['schema'], io, {})).toBe(0);
    const text = io.lines.join('\n');
    for (const model of ['OutboxEvent', 'FerryInboxReceipt', 'FerrySchemaMigration']) {
      expect(text).toContain(`model ${model} {`);
    }
    expect(text).not.toMatch(/^\s*(generator|datasource)\s/m);
  });

  it('prints the plain SQL without touching a database, and exits 1 on an unknown --after', async () => {
    const io = captureIo();
    expect(await runCli(['sql', '--database-url', 'postgresql://postgres@127.0.0.1:1/none'], io)).toBe(0);
    expect(io.lines.join('\n')).toContain('CREATE TABLE IF NOT EXISTS "ferry_schema_migrations"');
    const bad = captureIo();
    expect(await runCli(['sql', '--after', '9999_nope'], bad)).toBe(1);
    expect(bad.errors.join('\n')).toContain('FERRY_MIGRATIONS_NOT_FOUND');
  });
});
