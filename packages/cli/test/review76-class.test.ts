/**
 * Review 76, the class of each finding (review76-operator.test.ts holds the reviewer's examples):
 * every value option of every command (a flag, known or not, is no value: `--reason=--x` is the
 * way to mean it), every id of a replay's answer in text mode, `--json` only as an option, and
 * the --help footer's exit codes as the CLI answers them.
 */
import { runCli } from '@ferry/cli';
import { useCliDatabase } from './cliDatabase';
import { captureIo } from './io';
import { auditRows, insertEvent, insertReceipt } from './rows';

jest.setTimeout(60_000);

const ferry = useCliDatabase();
const { cli } = ferry;

async function status(id: string): Promise<string> {
  const [row] = await ferry.test.db.query<{ status: string }>(
    'SELECT status FROM outbox_events WHERE id = $1::uuid',
    [id],
  );
  return row!.status;
}

describe('a flag where any value was due is a missing value (exit 2, nothing changed)', () => {
  it.each([
    ['an unknown flag', ['--reason', '--whatever']],
    ['a known flag of the command', ['--reason', '--batch-size', '5']],
    ['the flag of its own value', ['--actor', '--reason', 'x']],
    ['the bare separator', ['--reason', '--']],
  ])('outbox mark-failed: %s', async (_what, flags) => {
    const id = await insertEvent(ferry.test.db);
    const before = await auditRows(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, ...flags);
    expect({
      code: run.code,
      status: await status(id),
      audited: (await auditRows(ferry.test.db)) - before,
    }).toEqual({
      code: 2,
      status: 'PENDING',
      audited: 0,
    });
    expect(run.errors[0]).toContain('FERRY_USAGE');
    expect(run.errors[0]).toContain(`${flags[0]} `);
    expect(run.errors[0]).toContain('argument missing');
  });

  it('a read command too: audit list --action --limit 5 is no listing of action "--limit"', async () => {
    const run = await cli('audit', 'list', '--action', '--limit', '5', '--json');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.lines.join('\n'))).toEqual({
      error: expect.objectContaining({ code: 'FERRY_USAGE', message: expect.stringContaining('--action') }),
    });
  });

  it('a global option: --database-url followed by a flag', async () => {
    const io = captureIo();
    const code = await runCli(['outbox', 'stats', '--database-url', '--json'], io, {});
    expect(code).toBe(2);
    expect([...io.lines, ...io.errors].join('\n')).toContain("'--database-url <url>' argument missing");
  });

  it('--reason=--dry-run is the explicit way to mean that text', async () => {
    const id = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, '--reason=--dry-run', '--dry-run');
    expect(run.code).toBe(0);
    expect(run.lines).toEqual([`${id} applied (dry run)`]);
    const [row] = await ferry.test.db.query<{ reason: string; dry_run: boolean }>(
      'SELECT reason, dry_run FROM ferry_operator_audit ORDER BY id DESC LIMIT 1',
    );
    expect(row).toEqual({ reason: '--dry-run', dry_run: true });
    expect(await status(id)).toBe('PENDING');
  });

  it('a value that merely starts with one dash stays a value (a reason "-1 retry")', async () => {
    const id = await insertEvent(ferry.test.db);
    const run = await cli('outbox', 'mark-failed', id, '--reason', '-1 retry', '--dry-run');
    expect(run.code).toBe(0);
  });
});

describe('a replay in text mode names every id its --json answer holds', () => {
  it('the new receipt and the request id given', async () => {
    const source = await insertReceipt(ferry.test.db);
    const requestId = '0b9f3c1e-8d2a-4c55-9a0e-6f1e2d3c4b5a';
    const replay = () =>
      cli(
        'inbox',
        'replay',
        source.id,
        '--expected-version',
        String(source.version),
        '--target-consumer',
        'rebuild',
        '--tenant',
        'acme',
        '--reason',
        'rebuild',
        '--request-id',
        requestId,
      );
    const run = await replay();
    expect(run.code).toBe(0);
    const [copy] = await ferry.test.db.query<{ id: string }>(
      'SELECT id::text FROM ferry_inbox_receipts WHERE replay_source_id = $1::uuid',
      [source.id],
    );
    expect(run.lines).toEqual([`${source.id} accepted replayId=${copy!.id} requestId=${requestId}`]);
    const again = await replay();
    expect(again.code).toBe(0);
    expect(again.lines).toEqual([`${source.id} duplicate replayId=${copy!.id} requestId=${requestId}`]);
  });
});

describe('--json is an option, not a word after --', () => {
  it('outbox retry -- --json answers in text (the id "--json" is malformed)', async () => {
    const run = await cli('outbox', 'retry', '--', '--json');
    expect(run.code).toBe(2);
    expect(run.lines).toEqual([]);
    expect(run.errors.join('\n')).toContain('FERRY_USAGE');
  });
});

describe('the --help footer names the exit codes the CLI answers', () => {
  it('0 for accepted / duplicate replays, 130 / 143 for signals', async () => {
    const io = captureIo();
    expect(await runCli(['--help'], io, {})).toBe(0);
    const help = io.lines.join('\n').replace(/\s+/g, ' ');
    expect(help).toContain('0 ok (every outcome applied, or accepted / duplicate for a replay)');
    expect(help).toContain('130 / 143 a signal (SIGINT / SIGTERM) stopped it');
  });
});
