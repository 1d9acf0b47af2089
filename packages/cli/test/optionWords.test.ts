/**
 * The words a value option takes, for every command and option (the class of review cli79's
 * findings 2 to 4): a known short flag (`-h`, `-V`) is no value (a separate word starting with
 * `--` already was not: review76-class); any other value starting with `-` is a value, and
 * `--reason=-x` is the way to mean any such text; a single-value option given twice is refused
 * (no option is repeatable), as is an empty value. Each is a usage error (exit 2) naming the
 * option, before anything changes.
 */
import type { Command } from 'commander';
import { buildProgram } from '../src/program';
import type { Context } from '../src/command';
import { useCliDatabase } from './cliDatabase';
import { auditRows, insertEvent } from './rows';

jest.setTimeout(60_000);

const ferry = useCliDatabase();
const { cli, bare } = ferry;

async function eventRow(id: string): Promise<{ status: string; last_error: string | null }> {
  const [row] = await ferry.test.db.query<{ status: string; last_error: string | null }>(
    'SELECT status, last_error FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  return row!;
}

/** A usage error (exit 2) whose first error line names `flag` and says `why`. */
function usage(run: { code: number; errors: string[] }, flag: string, why: string) {
  const line = run.errors[0] ?? '';
  return {
    code: run.code,
    usage: line.includes('FERRY_USAGE'),
    named: line.includes(flag),
    why: line.includes(why),
  };
}

const refused = { code: 2, usage: true, named: true, why: true };

describe('a known short flag where a value was due is a missing value', () => {
  it.each([
    ['-h (help)', '-h'],
    ['-V (the version, a flag of the program)', '-V'],
  ])('outbox mark-failed --reason %s changes nothing (exit 2)', async (_what, flag) => {
    const id = await insertEvent(ferry.test.db);
    const before = await auditRows(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, '--reason', flag);
    expect(usage(run, '--reason', 'argument missing')).toEqual(refused);
    expect(run.errors[0]).toContain(`--reason=${flag}`);
    expect({
      status: (await eventRow(id)).status,
      audited: (await auditRows(ferry.test.db)) - before,
    }).toEqual({
      status: 'PENDING',
      audited: 0,
    });
  });

  it.each([
    ['inbox requeue --actor -h', ['inbox', 'requeue', '--all', '--global', '--reason', 'r', '--actor', '-h']],
    ['audit list --action -V', ['audit', 'list', '--action', '-V']],
    ['outbox list --type -h', ['outbox', 'list', '--type', '-h']],
  ])('%s', async (_name, argv) => {
    const run = await cli(...argv);
    expect(usage(run, argv[argv.length - 2]!, 'argument missing')).toEqual(refused);
  });

  it('a global option too: --database-url -V prints no version', async () => {
    const run = await bare('outbox', 'stats', '--database-url', '-V');
    expect(usage(run, '--database-url', 'argument missing')).toEqual(refused);
    expect(run.lines).toEqual([]);
  });

  it.each(['-x', '-h'])('--reason=%s is the way to mean that text', async (text) => {
    const id = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, `--reason=${text}`);
    expect({ code: run.code, lines: run.lines }).toEqual({ code: 0, lines: [`${id} applied`] });
    expect(await eventRow(id)).toEqual({ status: 'FAILED', last_error: text });
  });

  it('a value starting with one dash that is no flag of the command stays a value (--reason -x)', async () => {
    const id = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, '--reason', '-x');
    expect(run.code).toBe(0);
    expect(await eventRow(id)).toEqual({ status: 'FAILED', last_error: '-x' });
  });
});

/** Every command that runs (a leaf of the tree), with its words (`['outbox', 'list']`). */
function leaves(command: Command, path: string[] = []): Array<[string[], Command]> {
  if (command.commands.length === 0) return [[path, command]];
  return command.commands.flatMap((sub) => leaves(sub, [...path, sub.name()]));
}

/** `--reason` for each option of a command that takes a value (not the program's own). */
function valueOptions(command: Command): string[] {
  return command.options.filter((o) => o.required && o.long !== undefined).map((o) => o.long as string);
}

describe('a value that starts with a short flag and goes on is a value (-Vendor, -hello)', () => {
  const never = (): never => {
    throw new Error('no command runs');
  };
  const stub: Context = {
    io: { out: never, err: never },
    env: {},
    json: false,
    statementTimeoutMs: never,
    db: never,
    exitCode: 0,
  };
  const program = buildProgram(stub, never);
  // The program's own value options (--database-url, --statement-timeout) on one command.
  const commands = [...leaves(program), [['outbox', 'stats'], program] as [string[], Command]];
  const cases = commands.flatMap(([path, command]) =>
    valueOptions(command).flatMap((flag) =>
      ['-Vx', '-hx'].map((value): [string, string[]] => [
        `${path.join(' ')} ${flag} ${value}`,
        [...path, flag, value],
      ]),
    ),
  );

  it('every command has value options to check', () => {
    expect(cases.length).toBeGreaterThan(40);
  });

  // --help after it: the command's help (exit 0), or the option's own refusal of the value (a
  // number, a UUID: exit 2 naming the option and the value), shows the value reached the
  // command's option, not the program's -V (the version, exit 0, the command never run).
  it.each(cases)('%s --help: the value reaches the option', async (_name, argv) => {
    const [value, flag, ...path] = [...argv].reverse() as [string, string, ...string[]];
    const run = await bare(...argv, '--help');
    const first = run.lines[0] ?? '';
    const error = run.errors[0] ?? '';
    const help = run.code === 0 && first.startsWith(`Usage: ferry ${path.reverse().join(' ')} `);
    const invalid =
      run.code === 2 &&
      error.includes(`option '${flag} `) &&
      error.includes(`argument '${value}' is invalid`);
    expect({ reached: help || invalid, answer: [...run.lines, ...run.errors][0] }).toEqual({
      reached: true,
      answer: expect.not.stringMatching(/^\d+\.\d+\.\d+$/),
    });
  });

  it.each([
    ['--reason "-Vendor outage"', '-Vendor outage'],
    ['--reason -hello', '-hello'],
  ])('outbox mark-failed %s marks the event with that reason', async (_name, reason) => {
    const id = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, '--reason', reason);
    expect({ code: run.code, lines: run.lines }).toEqual({ code: 0, lines: [`${id} applied`] });
    expect(await eventRow(id)).toEqual({ status: 'FAILED', last_error: reason });
  });

  it.each([
    ['--type', 'event_type', '-Vx'],
    ['--key', 'ordering_key', '-V2'],
  ])('outbox retry %s -V… retries the FAILED events it names, and no other', async (flag, column, value) => {
    const named = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const other = await insertEvent(ferry.test.db, { status: 'FAILED' });
    await ferry.test.db.execute(`UPDATE outbox_events SET ${column} = $1 WHERE id = $2::uuid`, [
      value,
      named,
    ]);
    const run = await cli('outbox', 'retry', flag, value);
    expect({ code: run.code, lines: run.lines.filter((line) => line.startsWith(named)) }).toEqual({
      code: 0,
      lines: [`${named} applied`],
    });
    expect([(await eventRow(named)).status, (await eventRow(other)).status]).toEqual(['PENDING', 'FAILED']);
  });
});

describe('a single-value option given twice is refused, naming it', () => {
  const id = '3f0c0000-0000-4000-8000-0000000000e1';
  it.each([
    ['--tenant', ['outbox', 'list', '--tenant', 'a', '--tenant', 'b']],
    ['--tenant', ['outbox', 'list', '--tenant=a', '--tenant', 'a']],
    ['--tenant', ['inbox', 'list', '--tenant', 'a', '--tenant=b']],
    [
      '--expected-version',
      [
        'inbox',
        'requeue',
        id,
        '--expected-version',
        '1',
        '--expected-version',
        '2',
        '--global',
        '--reason',
        'r',
      ],
    ],
    ['--reason', ['outbox', 'mark-failed', id, '--reason', 'a', '--reason', 'b']],
    ['--limit', ['audit', 'list', '--limit', '5', '--limit', '6']],
    ['--batch-size', ['outbox', 'retry', '--all', '--batch-size', '5', '--batch-size', '6']],
  ])('%s in %j', async (flag, argv) => {
    const run = await cli(...argv);
    expect(usage(run, flag, 'given twice')).toEqual(refused);
  });

  it('a flag that takes no value given twice is the same as once (--all --all --dry-run)', async () => {
    const failed = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const run = await cli('outbox', 'retry', '--all', '--all', '--dry-run', '--dry-run');
    expect({ code: run.code, status: (await eventRow(failed)).status }).toEqual({
      code: 0,
      status: 'FAILED',
    });
  });

  it('mark-failed with two reasons marks nothing', async () => {
    const event = await insertEvent(ferry.test.db);
    const before = await auditRows(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', event, '--reason', 'a', '--reason', 'b');
    expect(run.code).toBe(2);
    expect({ row: await eventRow(event), audited: (await auditRows(ferry.test.db)) - before }).toEqual({
      row: { status: 'PENDING', last_error: null },
      audited: 0,
    });
  });

  it('the connection options given twice keep the last, as documented (a wrapper script, then the operator)', async () => {
    const wrong = ferry.test.url.replace(/\/[^/?]*(\?|$)/, '/ferry_no_such_database$1');
    const run = await bare(
      '--database-url',
      wrong,
      '--statement-timeout',
      '100ms',
      'outbox',
      'stats',
      '--database-url',
      ferry.test.url,
      '--statement-timeout',
      '30s',
    );
    expect(run.code).toBe(0);
  });
});

describe('an empty value is refused, naming the option', () => {
  it.each([
    ['--type', ['outbox', 'list', '--type', '']],
    ['--key', ['outbox', 'list', '--key=']],
    ['--cursor', ['outbox', 'list', '--cursor', '']],
    ['--type', ['outbox', 'retry', '--type', '']],
    ['--key', ['outbox', 'retry', '--key', '']],
    ['--cursor', ['inbox', 'list', '--global', '--cursor', '']],
    ['--action', ['audit', 'list', '--action', '']],
    ['--actor', ['audit', 'list', '--actor', '']],
  ])('%s in %j', async (flag, argv) => {
    const run = await cli(...argv);
    expect(usage(run, flag, 'is empty')).toEqual(refused);
  });

  it('outbox retry --type "" retries nothing (not every FAILED event)', async () => {
    const failed = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const run = await cli('outbox', 'retry', '--type', '');
    expect(run.code).toBe(2);
    expect((await eventRow(failed)).status).toBe('FAILED');
  });
});

// Asking for help is answered whatever else the line holds (the operator is finding out how to
// write it): on main `ferry help outbox retry --type ""` and `outbox retry --type "" --help` were
// usage errors (exit 2) about the empty value. A help flag where a value was due (`--reason -h`,
// `--cursor --help`) stays refused (above): it is read as the value forgotten, not as help.
describe('help is answered despite a refused value', () => {
  it.each([
    ['help outbox retry --type ""', ['help', 'outbox', 'retry', '--type', '']],
    ['outbox retry --type "" --help', ['outbox', 'retry', '--type', '', '--help']],
    ['outbox retry --help --type=', ['outbox', 'retry', '--help', '--type=']],
    ['outbox retry --type a --type b -h', ['outbox', 'retry', '--type', 'a', '--type', 'b', '-h']],
  ])('%s prints the command help (exit 0)', async (_line, argv) => {
    const failed = await insertEvent(ferry.test.db, { status: 'FAILED' });
    const run = await bare(...argv);
    expect({ code: run.code, help: (run.lines[0] ?? '').startsWith('Usage: ferry outbox retry ') }).toEqual({
      code: 0,
      help: true,
    });
    expect((await eventRow(failed)).status).toBe('FAILED');
  });
});
