import { randomUUID } from 'node:crypto';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

const NOWHERE = 'postgresql://postgres@127.0.0.1:1/none';

async function run(argv: string[], url = NOWHERE) {
  const io = captureIo();
  const code = await runCli([...argv, '--database-url', url], io, {});
  return { code, ...io, out: io.lines.join('\n'), err: io.errors.join('\n') };
}

describe('ferry CLI conventions (issue 14)', () => {
  let migrated: TestDatabase;
  let empty: TestDatabase;
  beforeAll(async () => {
    migrated = await createTestDatabase();
    empty = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await migrated.drop();
    await empty.drop();
  });

  it('--help, -h and help print the usage on stdout and exit 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await run(argv);
      expect({ argv, code: result.code }).toEqual({ argv, code: 0 });
      expect(result.out).toMatch(/Usage: ferry/);
      expect(result.err).toBe('');
    }
  });

  it('per-command help describes that command only', async () => {
    const result = await run(['outbox', 'retry', '--help']);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Usage: ferry outbox retry/);
    expect(result.out).toContain('--dry-run');
    expect(result.out).not.toContain('requeue');
    const viaHelp = await run(['help', 'inbox', 'requeue']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.out).toMatch(/Usage: ferry inbox requeue/);
  });

  it.each([
    [['help', 'frob'], "unknown command 'frob'"],
    [['help', 'outbox', 'frob'], "unknown command 'frob'"],
    [['help', 'inbox', 'requeu'], "unknown command 'requeu'"],
  ])(
    '%j names a command that does not exist: a usage error (exit 2), not the general help',
    async (argv, message) => {
      // Before: `ferry help frob` printed ferry's help and exited 0 (`ferry frob` exits 2), so a
      // script checking a command's help, or an operator's typo, read as success.
      const result = await run(argv);
      expect(result.code).toBe(2);
      expect(result.err).toContain(message);
      expect(result.out).not.toMatch(/Usage: ferry/);
    },
  );

  it('--version prints the package version', async () => {
    const result = await run(['--version']);
    expect(result.code).toBe(0);
    expect(result.out).toBe('0.1.0');
  });

  it('enum values are case-insensitive', async () => {
    const lower = await run(['outbox', 'list', '--status', 'sent'], migrated.url);
    expect(lower.code).toBe(0);
    const inbox = await run(['inbox', 'list', '--status', 'dead', '--global'], migrated.url);
    expect(inbox.code).toBe(0);
  });

  it('every malformed value is a usage error (exit 2) with FERRY_USAGE, before the database', async () => {
    const cases = [
      ['outbox', 'list', '--limit', '0'],
      ['outbox', 'list', '--limit', 'abc'],
      ['inbox', 'list', '--global', '--limit', '0'],
      ['outbox', 'retry', 'not-a-uuid'],
      ['inbox', 'requeue', 'not-a-uuid', '--expected-version', '1', '--global'],
      ['outbox', 'show', 'nope'],
      ['inbox', 'show', 'nope', '--global'],
      ['outbox', 'stats', '--statement-timeout', '30'],
      ['outbox', 'stats', '--statement-timeout', '50ms'],
      ['outbox', 'stats', '--statement-timeout', '2h'],
    ];
    for (const argv of cases) {
      const result = await run(argv);
      expect({ argv, code: result.code }).toEqual({ argv, code: 2 });
      expect(result.err).toContain('FERRY_USAGE');
    }
  });

  it('a malformed FERRY_STATEMENT_TIMEOUT is a usage error naming it, before the database', async () => {
    const io = captureIo();
    const code = await runCli(['outbox', 'stats', '--database-url', NOWHERE], io, {
      FERRY_STATEMENT_TIMEOUT: 'soon',
    });
    expect(code).toBe(2);
    expect(io.errors[0]).toBe(
      'ferry outbox stats: FERRY_USAGE: FERRY_STATEMENT_TIMEOUT must be a duration like 30s, 15m, 12h or 7d, got "soon"',
    );
  });

  it('--json answers errors as JSON with a code and a hint', async () => {
    const usage = await run(['outbox', 'list', '--status', 'nope', '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.out)).toEqual({
      error: {
        code: 'FERRY_USAGE',
        message: expect.stringContaining('--status'),
        hint: 'see `ferry outbox list --help`',
      },
    });
    const down = await run(['outbox', 'stats', '--json']);
    expect(down.code).toBe(1);
    expect(JSON.parse(down.out)).toMatchObject({ error: { code: 'FERRY_DATABASE_UNAVAILABLE' } });
  });

  it('inbox and outbox commands on a database without ferry tables say FERRY_SCHEMA_NOT_READY: run ferry migrate', async () => {
    for (const argv of [
      ['inbox', 'stats', '--global'],
      ['inbox', 'list', '--global'],
      ['outbox', 'stats'],
      ['inbox', 'requeue', `${randomUUID()}:1`, '--global', '--reason', 'r'],
    ]) {
      const result = await run(argv, empty.url);
      expect({ argv, code: result.code }).toEqual({ argv, code: 1 });
      expect(result.err).toContain('FERRY_SCHEMA_NOT_READY');
      expect(result.err).toContain('ferry migrate');
      expect(result.err).not.toMatch(/^relation/m);
    }
  });

  it('stats has one JSON shape for the outbox and the inbox', async () => {
    const outbox = JSON.parse((await run(['outbox', 'stats', '--json'], migrated.url)).out) as object;
    const inbox = JSON.parse(
      (await run(['inbox', 'stats', '--global', '--json'], migrated.url)).out,
    ) as object;
    expect(Object.keys(outbox).sort()).toEqual(Object.keys(inbox).sort());
    expect(outbox).toMatchObject({ kind: 'outbox', scope: 'operator', counts: { SENT: 0, FAILED: 0 } });
    expect(inbox).toMatchObject({ kind: 'inbox', scope: 'global', counts: { DEAD: 0, COMPLETED: 0 } });
  });
});
