/**
 * Review 76: the `ferry` command line as an operator uses it at night, against a database ferry
 * migrated, with real rows of several tenants in every status. Each test here fails on the code it
 * was written against; see the report of review 76.
 *
 * 1. A flag given where a value was due. `ferry inbox requeue ID:4 --tenant acme --actor --dry-run
 *    --reason fixed` (the actor forgotten) or `ferry outbox mark-failed ID --reason --dry-run` (the
 *    reason forgotten): commander takes the next word as the value, so the actor (or reason) is
 *    the text "--dry-run" and the change is made for real, audited as a real run. README: a
 *    missing value is a usage error (exit 2, nothing changed); `--dry-run` changes nothing. The
 *    CLI already refuses `--reason --json` ("argument missing": --json is the program's), not a
 *    command's own flags. Likely fix: an option value that is one of the command's (or its
 *    parents') flags is a missing value (a parser in scope.ts mutating() / the option builders,
 *    or a check of the raw argv in cli.ts); `--reason=--dry-run` stays the way to mean it.
 *
 * 2. `ferry inbox replay ID --expected-version N --target-consumer C --tenant T --reason R` without
 *    `--request-id`, in text mode: prints `ID accepted` and `ferry inbox replay: 1 accepted`. The
 *    request id the CLI made up is nowhere (nor the new receipt's id), so the operator cannot
 *    retry that request as the same one. README: "Without `--request-id` the CLI makes one up;
 *    every answer names it (`requestId`), a failed one too". Only --json (results[].requestId)
 *    and a failure (`request id …` on stderr) name it. Likely place: output.ts printActionText
 *    prints only `id outcome`, dropping requestId / replayId.
 *
 * 3. `ferry audit list --tenant ""` (an unset shell variable), or a tenant id with a control
 *    character or beyond 255 characters: exit 0 and an empty trail, while the same `--tenant` of
 *    every outbox / inbox command is a usage error (review 62). README: "A value only ferry's
 *    library can check (a `--tenant` id's characters, …) is a usage error naming the flag too".
 *    Likely place: commands/audit.ts scopeOf() builds `tenant:${o.tenant}` unchecked, and core's
 *    audit list takes any scope text (audit/log.ts scopeFilter: optionalTextFilter, not the
 *    tenant id rule of the admins' forTenant).
 */
import { randomUUID } from 'node:crypto';
import { runCli } from '@ferry/cli';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { captureIo } from './io';

jest.setTimeout(60_000);

let t: TestDatabase;

async function cli(...argv: string[]) {
  const io = captureIo();
  const code = await runCli([...argv, '--database-url', t.url], io, { FERRY_ACTOR: 'ops@test' });
  return { code, ...io };
}

const TENANTS = ['acme', 'evil'] as const;
const OUTBOX = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'] as const;
const INBOX = ['PENDING', 'PROCESSING', 'RETRYABLE', 'COMPLETED', 'DEAD'] as const;

/** Events and receipts of two tenants (and global receipts) in every status, as rows ferry wrote. */
async function seed(): Promise<void> {
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, tenant_id, max_retries, status, retry_count,
       claim_token, lease_expires_at, claimed_at, published_at, failed_at, last_error, created_at)
     SELECT gen_random_uuid(), 'order.placed', '{"n":1}', t, 5, s,
       CASE WHEN s = 'FAILED' THEN 5 ELSE 0 END,
       CASE WHEN s = 'PROCESSING' THEN gen_random_uuid() END,
       CASE WHEN s = 'PROCESSING' THEN now() + interval '1 minute' END,
       CASE WHEN s = 'PROCESSING' THEN now() END,
       CASE WHEN s = 'SENT' THEN now() - interval '1 day' END,
       CASE WHEN s = 'FAILED' THEN now() END,
       CASE WHEN s = 'FAILED' THEN 'broker refused' END,
       now() - (i || ' minutes')::interval
     FROM unnest($1::text[]) t, unnest($2::text[]) s, generate_series(1, 3) i`,
    [TENANTS, OUTBOX],
  );
  await t.db.execute(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, status, attempts, max_attempts, claim_token, lease_expires_at, row_version,
       last_error, completed_at, dead_at)
     SELECT t, 'work', 'm-' || coalesce(t, 'global') || '-' || s || '-' || i, '{"n":1}', 'fp', 7, s, 1, 5,
       CASE WHEN s = 'PROCESSING' THEN gen_random_uuid() END,
       CASE WHEN s = 'PROCESSING' THEN now() + interval '1 minute' END,
       3,
       CASE WHEN s = 'DEAD' THEN 'card service rejected the schema' END,
       CASE WHEN s = 'COMPLETED' THEN now() - interval '2 days' END,
       CASE WHEN s = 'DEAD' THEN now() END
     FROM unnest($1::text[]) t, unnest($2::text[]) s, generate_series(1, 3) i`,
    [[...TENANTS, null], INBOX],
  );
}

async function event(tenant: string, status: string): Promise<{ id: string; status: string }> {
  const [row] = await t.db.query<{ id: string; status: string }>(
    `SELECT id::text, status FROM outbox_events WHERE tenant_id = $1 AND status = $2 ORDER BY seq LIMIT 1`,
    [tenant, status],
  );
  return row!;
}

async function eventStatus(id: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  return row?.status;
}

async function receipt(
  tenant: string,
  status: string,
  offset = 0,
): Promise<{ id: string; status: string; row_version: number }> {
  const [row] = await t.db.query<{ id: string; status: string; row_version: number }>(
    `SELECT id::text, status, row_version FROM ferry_inbox_receipts
     WHERE tenant_id = $1 AND status = $2 ORDER BY message_id LIMIT 1 OFFSET $3`,
    [tenant, status, offset],
  );
  return row!;
}

async function receiptStatus(id: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ status: string }>(
    'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row?.status;
}

async function auditRows(): Promise<number> {
  const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_operator_audit');
  return row!.n;
}

beforeAll(async () => {
  t = await createTestDatabase();
  await seed();
});
afterAll(async () => {
  await t.drop();
});

describe('review76: a flag where a value was due is a missing value (exit 2), never a real run', () => {
  it('outbox mark-failed ID --reason --dry-run (the reason forgotten) marks nothing failed', async () => {
    const pending = await event('acme', 'PENDING');
    const before = await auditRows();
    const run = await cli('outbox', 'mark-failed', pending.id, '--reason', '--dry-run');
    // What happened: "ID applied", exit 0; the event FAILED with last_error "--dry-run".
    expect({
      code: run.code,
      status: await eventStatus(pending.id),
      audited: (await auditRows()) - before,
    }).toEqual({ code: 2, status: 'PENDING', audited: 0 });
    expect(run.errors[0]).toContain('FERRY_USAGE');
    expect(run.errors[0]).toContain('--reason');
  });

  it('inbox requeue ID:v --actor --dry-run --reason R (the actor forgotten) requeues nothing', async () => {
    const dead = await receipt('acme', 'DEAD');
    const before = await auditRows();
    const run = await cli(
      'inbox',
      'requeue',
      `${dead.id}:${dead.row_version}`,
      '--tenant',
      'acme',
      '--actor',
      '--dry-run',
      '--reason',
      'card service fixed',
    );
    // What happened: "ID applied", exit 0; the receipt PENDING, audited as a real run by "--dry-run".
    expect({
      code: run.code,
      status: await receiptStatus(dead.id),
      audited: (await auditRows()) - before,
    }).toEqual({
      code: 2,
      status: 'DEAD',
      audited: 0,
    });
    expect(run.errors[0]).toContain('--actor');
  });

  it('inbox replay ID --target-consumer --dry-run … (the consumer forgotten) makes no copy', async () => {
    const completed = await receipt('acme', 'COMPLETED');
    const run = await cli(
      'inbox',
      'replay',
      completed.id,
      '--expected-version',
      String(completed.row_version),
      '--target-consumer',
      '--dry-run',
      '--tenant',
      'acme',
      '--reason',
      'rebuild the projection',
    );
    const copies = await t.db.query('SELECT id FROM ferry_inbox_receipts WHERE replay_source_id = $1::uuid', [
      completed.id,
    ]);
    // What happened: "ID accepted", exit 0; a PENDING copy for consumer "--dry-run".
    expect({ code: run.code, copies: copies.length }).toEqual({ code: 2, copies: 0 });
    expect(run.errors[0]).toContain('--target-consumer');
  });
});

describe('review76: a replay names its request id in every answer', () => {
  it('text mode, without --request-id: the request id made up is printed, so the request can be retried as the same one', async () => {
    const completed = await receipt('acme', 'COMPLETED', 1);
    const run = await cli(
      'inbox',
      'replay',
      completed.id,
      '--expected-version',
      String(completed.row_version),
      '--target-consumer',
      'rebuild',
      '--tenant',
      'acme',
      '--reason',
      'rebuild the projection',
    );
    expect(run.code).toBe(0);
    const [copy] = await t.db.query<{ id: string; replay_request_id: string }>(
      `SELECT id::text, replay_request_id::text FROM ferry_inbox_receipts WHERE replay_source_id = $1::uuid`,
      [completed.id],
    );
    expect(copy).toBeDefined();
    // What happened: stdout "ID accepted", stderr "ferry inbox replay: 1 accepted", no request id.
    expect([...run.lines, ...run.errors].join('\n')).toContain(copy!.replay_request_id);
  });
});

describe('review76: audit list --tenant takes only a tenant id, as every other --tenant', () => {
  it.each([
    ['empty (an unset shell variable)', ''],
    ['with a control character', 'acme\u001b[2J'],
    ['beyond 255 characters', 'a'.repeat(300)],
  ])('--tenant %s is a usage error naming --tenant, not an empty trail (exit 0)', async (_what, tenant) => {
    // The same value is refused by the outbox and inbox commands.
    const inbox = await cli('inbox', 'list', '--tenant', tenant);
    expect(inbox.code).toBe(2);
    const run = await cli('audit', 'list', '--tenant', tenant, '--json');
    expect({ code: run.code, answer: JSON.parse(run.lines.join('\n')) as unknown }).toEqual({
      code: 2,
      answer: {
        error: expect.objectContaining({ code: 'FERRY_USAGE', message: expect.stringContaining('--tenant') }),
      },
    });
  });

  it('for comparison: a real tenant id lists its trail', async () => {
    const run = await cli('audit', 'list', '--tenant', `t-${randomUUID()}`, '--json');
    expect(run.code).toBe(0);
  });
});
