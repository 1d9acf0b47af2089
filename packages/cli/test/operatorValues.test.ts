/**
 * Review 62's classes beyond its own cases (each failed first): every value an operator gives is
 * checked in full before anything changes (a per-id version, a calendar date, a value only ferry's
 * library checks), a failure advises a retry only when one can succeed, `top --timeout` is the
 * per-probe deadline health takes, and a server that never completes the connection is answered
 * as unavailable, promptly.
 */
import { randomUUID } from 'node:crypto';
import { FerryValidationError, Inbox, InboxPermanentError } from '@ferry/core';
import pino from 'pino';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { outcomeWithin } from '../../../test-support/deadlines';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import type { Context } from '../src/command';
import { FailedPartway, printFailure } from '../src/failure';
import { captureIo } from './io';

jest.setTimeout(60_000);

/** Below the CLI's 10 s connect bound: a command still running then waits for a connection. */
const BEFORE_CONNECT_BOUND_MS = 8_000;

let t: TestDatabase;
let inbox: Inbox;

async function cli(...argv: string[]) {
  const io = captureIo();
  const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
  return { code, ...io };
}

async function statusOf(id: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ status: string }>(
    'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row?.status;
}

async function deadReceipt(tenantId: string): Promise<{ id: string; version: number }> {
  const { record } = await inbox.accept({
    consumer: 'work',
    messageId: `m-${randomUUID()}`,
    tenantId,
    payload: {},
  });
  for (let i = 0; i < 50 && (await statusOf(record.id)) !== 'DEAD'; i += 1) await inbox.runOnce();
  const [row] = await t.db.query<{ status: string; row_version: number }>(
    'SELECT status, row_version FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [record.id],
  );
  expect(row?.status).toBe('DEAD');
  return { id: record.id, version: row!.row_version };
}

beforeAll(async () => {
  t = await createTestDatabase();
  inbox = new Inbox(t.prisma, {
    logger: pino({ level: 'silent' }),
    handlers: {
      work: async () => {
        throw new InboxPermanentError('handler is broken');
      },
    },
    worker: { pollIntervalMs: 20, retryBaseMs: 1, retryMaxMs: 1 },
  });
});
afterAll(async () => {
  await inbox.close();
  await t.drop();
});

/** Exit 2 FERRY_USAGE whose first line names `flag`. */
function usageNaming(run: { code: number; errors: string[] }, flag: string) {
  return {
    code: run.code,
    usage: run.errors[0]?.includes('FERRY_USAGE'),
    named: run.errors[0]?.includes(flag),
  };
}

describe('a per-id value is checked for every id before the first is acted on', () => {
  it('inbox requeue A:v B:2147483648 (past the int4 row version) requeues nothing', async () => {
    const a = await deadReceipt('values');
    const b = await deadReceipt('values');
    const run = await cli(
      'inbox',
      'requeue',
      `${a.id}:${a.version}`,
      `${b.id}:2147483648`,
      '--tenant',
      'values',
      '--reason',
      'r',
    );
    expect(usageNaming(run, b.id)).toEqual({ code: 2, usage: true, named: true });
    expect(await statusOf(a.id)).toBe('DEAD');
  });

  it('inbox requeue <id> --expected-version 2147483648 is a usage error naming the flag', async () => {
    const a = await deadReceipt('values');
    const run = await cli(
      'inbox',
      'requeue',
      a.id,
      '--expected-version',
      '2147483648',
      '--tenant',
      'values',
      '--reason',
      'r',
    );
    expect(usageNaming(run, '--expected-version')).toEqual({ code: 2, usage: true, named: true });
  });
});

describe('a value only the library checks is a usage error naming the flag', () => {
  const id = '3f0c0000-0000-4000-8000-0000000000e1';
  it.each([
    ['--tenant', ['outbox', 'list', '--tenant', '']],
    ['--tenant', ['outbox', 'retry', '--all', '--tenant', 'a\nb']],
    ['--tenant', ['inbox', 'requeue', '--all', '--tenant', '', '--reason', 'r']],
    ['--cursor', ['inbox', 'list', '--global', '--cursor', 'garbage']],
    ['--actor', ['outbox', 'retry', id, '--actor', ' ']],
    ['--reason', ['inbox', 'requeue', `${id}:1`, '--global', '--reason', '']],
    [
      '--target-consumer',
      [
        'inbox',
        'replay',
        id,
        '--expected-version',
        '1',
        '--target-consumer',
        '',
        '--global',
        '--reason',
        'r',
      ],
    ],
  ])('%s in %j', async (flag, argv) => {
    const run = await cli(...argv);
    expect(usageNaming(run, flag)).toEqual({ code: 2, usage: true, named: true });
  });

  it('a replay refused as a usage error names no request id to retry with (nothing was sent)', async () => {
    const argv = ['inbox', 'replay', id, '--expected-version', '1', '--target-consumer', '', '--global'];
    const text = await cli(...argv, '--reason', 'r');
    expect(text.errors.join('\n')).not.toContain('retry with');
    const json = await cli(...argv, '--reason', 'r', '--json');
    expect(JSON.parse(json.lines[0]!)).toEqual({
      error: expect.not.objectContaining({ requestId: expect.anything() }),
    });
  });

  it('a replay of a receipt that does not exist is not advised to be retried with its request id', async () => {
    const run = await cli(
      'inbox',
      'replay',
      randomUUID(),
      '--expected-version',
      '1',
      '--target-consumer',
      'work',
      '--global',
      '--reason',
      'r',
    );
    expect(run.code).toBe(1);
    expect(run.errors[0]).toContain('FERRY_NOT_FOUND');
    expect(run.errors.join('\n')).not.toContain('retry with');
  });
});

describe('a refusal after something was applied', () => {
  it('is no usage error (exit 2 promises nothing changed): the applied outcomes, then the library error, exit 1', () => {
    const io = captureIo();
    const ctx: Context = {
      io,
      env: {},
      json: false,
      statementTimeoutMs: () => 30_000,
      db: () => Promise.reject(new Error('no database in this test')),
      exitCode: 0,
    };
    const done = {
      action: 'outbox mark-failed',
      dryRun: false,
      results: [{ id: '3f0c0000-0000-4000-8000-0000000000e1', outcome: 'applied' }],
      counts: { applied: 1 },
    };
    const refused = new FerryValidationError('reason', 'must be a non-empty string');
    const code = printFailure(ctx, 'ferry outbox mark-failed', new FailedPartway(refused, { done }), '');
    expect({ code, lines: io.lines, error: io.errors[1] }).toEqual({
      code: 1,
      lines: ['3f0c0000-0000-4000-8000-0000000000e1 applied'],
      error: expect.stringContaining('FERRY_VALIDATION_FAILED'),
    });
  });
});

describe('a date is a calendar date', () => {
  it.each([
    ['inbox purge-payloads', ['inbox', 'purge-payloads', '--global', '--before', '2026-02-29']],
    ['outbox purge-sent', ['outbox', 'purge-sent', '--before', '2026-04-31T00:00:00Z']],
    ['audit list', ['audit', 'list', '--since', '2026-01-01T24:61']],
    ['audit list', ['audit', 'list', '--since', '2026-01-01T23:59:60Z']],
    ['audit list', ['audit', 'list', '--since', '2026-01-01T12:00:00+25:00']],
    ['audit list', ['audit', 'list', '--since', '2026-13-01']],
  ])('%s %j is a usage error', async (_name, argv) => {
    const run = await cli(...argv);
    expect(usageNaming(run, argv.includes('--since') ? '--since' : '--before')).toEqual({
      code: 2,
      usage: true,
      named: true,
    });
  });

  it.each(['2024-02-29', '2024-02-29T23:59:59.999Z', '2024-02-29T12:00:00+01:00', '2024-02-29T12:00'])(
    'a real date (%s) is taken',
    async (when) => {
      const run = await cli('audit', 'list', '--since', when);
      expect({ code: run.code, errors: run.errors }).toEqual({ code: 0, errors: [] });
    },
  );
});

describe('top --timeout', () => {
  it('is refused out of the bounds health takes', async () => {
    const run = await cli('top', '--iterations', '1', '--timeout', '0s');
    expect(usageNaming(run, '--timeout')).toEqual({ code: 2, usage: true, named: true });
  });
});

describe('a server that never completes the connection', () => {
  async function silent(argv: string[]) {
    const proxy = await halfOpenProxy(new URL(t.url));
    proxy.silence();
    try {
      const io = captureIo();
      const run = runCli([...argv, '--database-url', proxy.url(t.url)], io, {});
      return { outcome: await outcomeWithin(run, BEFORE_CONNECT_BOUND_MS), ...io };
    } finally {
      proxy.close();
    }
  }

  it('top --timeout bounds each probe (the database check says within how long)', async () => {
    const run = await silent(['top', '--iterations', '1', '--timeout', '1s', '--json']);
    expect(run.outcome).toEqual({ value: 0 });
    const { checks } = JSON.parse(run.lines[0]!) as { checks: Array<{ name: string; detail: string }> };
    expect(checks.find((c) => c.name === 'database')?.detail).toContain('within 1000 ms');
  });

  it('health --timeout 1s ends once it answered, without waiting for the connection attempt', async () => {
    const run = await silent(['health', '--timeout', '1s']);
    expect(run.outcome).toEqual({ value: 1 });
    expect(run.lines[0]).toMatch(/^down database: /);
  });

  it('check --statement-timeout 1s is FERRY_DATABASE_UNAVAILABLE', async () => {
    const run = await silent(['check', '--statement-timeout', '1s']);
    expect(run.outcome).toEqual({ value: 1 });
    expect(run.errors[0]).toContain('FERRY_DATABASE_UNAVAILABLE');
  });
});

describe('an actor from FERRY_ACTOR the library refuses', () => {
  it('is a usage error naming FERRY_ACTOR, not --actor (which was not given)', async () => {
    const io = captureIo();
    const argv = ['outbox', 'retry', '3f0c0000-0000-4000-8000-0000000000e1', '--database-url', t.url];
    const code = await runCli(argv, io, { FERRY_ACTOR: ' ' });
    const error = io.errors[0] ?? '';
    expect({ code, usage: error.includes('FERRY_USAGE'), named: error.includes('FERRY_ACTOR') }).toEqual({
      code: 2,
      usage: true,
      named: true,
    });
    expect(error).not.toContain('--actor');
  });

  it('--actor given refused still names --actor', async () => {
    const io = captureIo();
    const argv = ['outbox', 'retry', '3f0c0000-0000-4000-8000-0000000000e1', '--actor', ' '];
    const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
    expect({ code, named: io.errors[0]?.includes('--actor') }).toEqual({ code: 2, named: true });
  });
});
