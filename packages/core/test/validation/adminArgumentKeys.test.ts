import { randomUUID } from 'node:crypto';
import {
  createAuditLog,
  createOutboxAdmin,
  emitMany,
  FerryValidationError,
  Inbox,
  InboxAdmin,
  InboxPrivilegedAdmin,
  type InboxScopedAdmin,
  type OutboxAdmin,
} from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  describeArgumentTable,
  misspeltArgument,
  validationErrorOf,
  wrongArgument,
  type ArgumentRow,
} from '../../../../test-support/optionTables';

/**
 * Every public admin method that takes an object argument (outbox admin and its forTenant scope,
 * inbox admin's tenant and global scopes, the privileged admin and its scopeOf, the audit log),
 * called with a misspelt key or a wrongly typed value on rows it would change: refused with
 * FERRY_VALIDATION_FAILED naming the key, with nothing changed and nothing audited. A typed
 * `dryrun: true` must never run the real action.
 */
let t: TestDatabase;
let inbox: Inbox;
beforeAll(async () => {
  t = await createTestDatabase();
  inbox = new Inbox(t.prisma, {
    global: 'shared',
    logger: pino({ level: 'silent' }),
    handlers: { work: async () => {} },
  });
});
afterAll(async () => {
  await inbox.close();
  await t.drop();
});

interface Receipt {
  readonly id: string;
  readonly expectedVersion: number;
}

/** Receipts one inbox scope's mutations would change: DEAD, COMPLETED, an expired claim. */
interface InboxRows {
  readonly dead: Receipt;
  readonly completed: Receipt;
  readonly claimToken: string;
}

interface Fixture {
  /** Outbox events of tenant `acme`: FAILED, PENDING, an expired claim (`claimToken`), SENT. */
  readonly failed: string;
  readonly pending: string;
  readonly claimToken: string;
  readonly tenant: InboxRows;
  readonly global: InboxRows;
  /** After every fixture's timestamps: a purge before it would take them. */
  readonly later: Date;
}

async function event(status: 'PENDING' | 'PROCESSING' | 'FAILED' | 'SENT', token = randomUUID()) {
  const { ids } = await emitMany(t.db, [{ type: 'args.test', payload: {}, tenantId: 'acme' }]);
  const id = ids[0]!;
  if (status === 'PENDING') return id;
  await t.db.execute(
    `UPDATE outbox_events SET status = 'PROCESSING', claim_token = $2::uuid, claimed_at = now(),
       claim_count = claim_count + 1, lease_expires_at = now() + $3::int * interval '1 minute'
       WHERE id = $1::uuid`,
    [id, token, status === 'PROCESSING' ? -1 : 10],
  );
  if (status === 'FAILED' || status === 'SENT') {
    const kind = status === 'FAILED' ? 'permanent' : 'sent';
    await relayStore(t.db).complete(token, [
      { id, kind, error: status === 'FAILED' ? 'boom' : null, delayMs: 0 },
    ]);
  }
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  expect(row?.status).toBe(status);
  return id;
}

async function receipt(tenantId: string | null, set: string, values: unknown[] = []): Promise<Receipt> {
  const { record } = await inbox.accept({ consumer: 'work', messageId: randomUUID(), tenantId, payload: {} });
  const [row] = await t.db.query<{ row_version: number }>(
    `UPDATE ferry_inbox_receipts SET ${set} WHERE id = $1::uuid RETURNING row_version`,
    [record.id, ...values],
  );
  return { id: record.id, expectedVersion: row!.row_version };
}

async function inboxRows(tenantId: string | null): Promise<InboxRows> {
  const claimToken = randomUUID();
  return {
    dead: await receipt(tenantId, `status = 'DEAD', dead_at = now()`),
    completed: await receipt(tenantId, `status = 'COMPLETED', completed_at = now() - interval '1 hour'`),
    claimToken:
      (await receipt(
        tenantId,
        `status = 'PROCESSING', claim_token = $2::uuid, attempts = 1, lease_expires_at = now() - interval '1 minute'`,
        [claimToken],
      )) && claimToken,
  };
}

async function fixture(): Promise<Fixture> {
  const claimToken = randomUUID();
  await event('SENT');
  await event('PROCESSING', claimToken);
  return {
    failed: await event('FAILED'),
    pending: await event('PENDING'),
    claimToken,
    tenant: await inboxRows('acme'),
    global: await inboxRows(null),
    later: new Date(Date.now() + 86_400_000),
  };
}

/** Every row a refused call could have changed, and the audit trail. */
async function state(): Promise<unknown> {
  return {
    events: await t.db.query(
      `SELECT id::text, status, retry_count, claim_token::text, last_error FROM outbox_events ORDER BY id`,
    ),
    receipts: await t.db.query(
      `SELECT id::text, status, row_version, attempts, claim_token::text, payload IS NULL AS purged
         FROM ferry_inbox_receipts ORDER BY id`,
    ),
    audit: await t.db.query(`SELECT count(*)::int AS n FROM ferry_operator_audit`),
  };
}

const outboxScopes: Array<[string, () => OutboxAdmin]> = [
  ['outbox', () => createOutboxAdmin(t.db)],
  ['outbox forTenant', () => createOutboxAdmin(t.db).forTenant('acme')],
];

function outboxRows(name: string, admin: () => OutboxAdmin): ArgumentRow<Fixture>[] {
  return [
    misspeltArgument(`${name} retry`, 'dryrun', (f) => admin().retry(f.failed, { dryrun: true } as never)),
    misspeltArgument(`${name} retry`, 'dry_run', (f) => admin().retry(f.failed, { dry_run: true } as never)),
    misspeltArgument(`${name} retry`, 'Actor', (f) => admin().retry(f.failed, { Actor: 'ops' } as never)),
    misspeltArgument(`${name} retryMany`, 'dryrun', (f) =>
      admin().retryMany([f.failed], { dryrun: true } as never),
    ),
    misspeltArgument(`${name} markFailed`, 'dryrun', (f) =>
      admin().markFailed(f.pending, 'poison', { dryrun: true } as never),
    ),
    misspeltArgument(`${name} markFailed`, 'Reason', (f) =>
      admin().markFailed(f.pending, 'poison', { Reason: 'other' } as never),
    ),
    misspeltArgument(`${name} release`, 'dryrun', () => admin().release({ dryrun: true } as never)),
    misspeltArgument(`${name} release`, 'claim_token', (f) =>
      admin().release({ claim_token: f.claimToken, dryRun: true } as never),
    ),
    wrongArgument(`${name} release`, 'force', '"true" (string)', (f) =>
      admin().release({ claimToken: f.claimToken, force: 'true' as never }),
    ),
    wrongArgument(`${name} release`, 'limit', '"5" (string)', () => admin().release({ limit: '5' as never })),
    misspeltArgument(`${name} purgeSent`, 'dryrun', (f) =>
      admin().purgeSent({ before: f.later, dryrun: true } as never),
    ),
    wrongArgument(`${name} purgeSent`, 'limit', '"5" (string)', (f) =>
      admin().purgeSent({ before: f.later, limit: '5' as never }),
    ),
    misspeltArgument(`${name} list`, 'state', () => admin().list({ state: 'FAILED' } as never)),
    wrongArgument(`${name} list`, 'limit', '"5" (string)', () => admin().list({ limit: '5' as never })),
    misspeltArgument(`${name} health`, 'maxFailures', () => admin().health({ maxFailures: 5 } as never)),
  ];
}

const inboxScopes: Array<[string, (f: Fixture) => [InboxScopedAdmin, InboxRows]]> = [
  ['inbox forTenant', (f) => [new InboxAdmin(t.db).forTenant('acme'), f.tenant]],
  ['inbox forGlobal', (f) => [new InboxAdmin(t.db).forGlobal(), f.global]],
  [
    'inbox privileged scopeOf',
    (f) => [
      new InboxPrivilegedAdmin(t.db, { privilegedAdmin: true }).scopeOf({ tenantId: 'acme' }),
      f.tenant,
    ],
  ],
];

function inboxRowsOf(
  name: string,
  scoped: (f: Fixture) => [InboxScopedAdmin, InboxRows],
): ArgumentRow<Fixture>[] {
  const requeue = (f: Fixture, extra: Record<string, unknown>, drop?: string) => {
    const [admin, rows] = scoped(f);
    const input: Record<string, unknown> = { ...rows.dead, actor: 'ops', reason: 'fixed', ...extra };
    if (drop !== undefined) delete input[drop];
    return admin.requeue(input as never);
  };
  const replay = (f: Fixture, extra: Record<string, unknown>) => {
    const [admin, rows] = scoped(f);
    const input = {
      ...rows.completed,
      requestId: randomUUID(),
      targetConsumer: 'work',
      actor: 'ops',
      reason: 'rebuild',
    };
    return admin.replay({ ...input, ...extra } as never);
  };
  return [
    misspeltArgument(`${name} requeue`, 'dryrun', (f) => requeue(f, { dryrun: true })),
    misspeltArgument(`${name} requeue`, 'dry_run', (f) => requeue(f, { dry_run: true })),
    misspeltArgument(`${name} requeue`, 'expectedVerison', (f) =>
      requeue(f, { expectedVerison: f.tenant.dead.expectedVersion }, 'expectedVersion'),
    ),
    misspeltArgument(`${name} requeue`, 'expected_version', (f) => requeue(f, { expected_version: 1 })),
    wrongArgument(`${name} requeue`, 'dryRun', '"true" (string)', (f) => requeue(f, { dryRun: 'true' })),
    misspeltArgument(`${name} replay`, 'dryrun', (f) => replay(f, { dryrun: true })),
    misspeltArgument(`${name} replay`, 'target_consumer', (f) => replay(f, { target_consumer: 'x' })),
    misspeltArgument(`${name} release`, 'dryrun', (f) => scoped(f)[0].release({ dryrun: true } as never)),
    wrongArgument(`${name} release`, 'force', '"true" (string)', (f) => {
      const [admin, rows] = scoped(f);
      return admin.release({ claimToken: rows.claimToken, force: 'true' as never });
    }),
    wrongArgument(`${name} release`, 'limit', '"5" (string)', (f) =>
      scoped(f)[0].release({ limit: '5' as never }),
    ),
    misspeltArgument(`${name} purgeCompletedPayload`, 'dryrun', (f) =>
      scoped(f)[0].purgeCompletedPayload({ before: f.later, dryrun: true } as never),
    ),
    wrongArgument(`${name} purgeCompletedPayload`, 'limit', '"5" (string)', (f) =>
      scoped(f)[0].purgeCompletedPayload({ before: f.later, limit: '5' as never }),
    ),
    misspeltArgument(`${name} list`, 'state', (f) => scoped(f)[0].list({ state: 'DEAD' } as never)),
    wrongArgument(`${name} list`, 'limit', '"5" (string)', (f) => scoped(f)[0].list({ limit: '5' as never })),
  ];
}

const privileged = () => new InboxPrivilegedAdmin(t.db, { privilegedAdmin: true });
const auditLog = () => createAuditLog(t.db);

describe('a misspelt or wrongly typed admin argument is refused before anything changes', () => {
  describeArgumentTable<Fixture>(
    [
      ...outboxScopes.flatMap(([name, admin]) => outboxRows(name, admin)),
      ...inboxScopes.flatMap(([name, scoped]) => inboxRowsOf(name, scoped)),
      misspeltArgument('inbox privileged list', 'state', () => privileged().list({ state: 'DEAD' } as never)),
      wrongArgument('inbox privileged list', 'limit', '"5" (string)', () =>
        privileged().list({ limit: '5' as never }),
      ),
      misspeltArgument('audit list', 'tenant', () => auditLog().list({ tenant: 'acme' } as never)),
      wrongArgument('audit list', 'limit', '"5" (string)', () => auditLog().list({ limit: '5' as never })),
      wrongArgument('audit list', 'since', '"2020-01-01" (string)', () =>
        auditLog().list({ since: '2020-01-01' as never }),
      ),
    ],
    fixture,
    state,
  );
});

describe('a typed dryrun never runs the real action', () => {
  it('outbox retry(id, { dryrun: true }): the event stays FAILED and no audit row claims the retry', async () => {
    const f = await fixture();
    const error = await validationErrorOf(() =>
      createOutboxAdmin(t.db).retry(f.failed, { actor: 'ops', dryrun: true } as never),
    );
    expect(error).toBeInstanceOf(FerryValidationError);
    expect(error.message).toMatch(/dryrun.*did you mean dryRun/);
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM outbox_events WHERE id = $1::uuid',
      [f.failed],
    );
    expect(row?.status).toBe('FAILED');
    const { items } = await createAuditLog(t.db).list({ id: f.failed });
    expect(items).toEqual([]);
  });

  it('inbox requeue({ ..., dry_run: true }): the receipt stays DEAD and no audit row names it', async () => {
    const f = await fixture();
    const error = await validationErrorOf(() =>
      new InboxAdmin(t.db)
        .forTenant('acme')
        .requeue({ ...f.tenant.dead, actor: 'ops', reason: 'fixed', dry_run: true } as never),
    );
    expect(error.message).toMatch(/dry_run.*did you mean dryRun/);
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [f.tenant.dead.id],
    );
    expect(row?.status).toBe('DEAD');
    expect((await createAuditLog(t.db).list({ id: f.tenant.dead.id })).items).toEqual([]);
  });

  it('the documented keys pass: a real dryRun is audited as a dry run and changes nothing', async () => {
    const f = await fixture();
    const [result] = await createOutboxAdmin(t.db)
      .forTenant('acme')
      .retryMany([f.failed], { actor: 'ops', reason: 'check', dryRun: true });
    expect(result).toEqual({ id: f.failed, outcome: 'applied' });
    const { items } = await createAuditLog(t.db).list({ id: f.failed });
    expect(items).toMatchObject([{ dryRun: true, action: 'outbox.retry' }]);
  });

  it("markFailed takes the documented audit object, reason included (one AuditOptions shared with retry): the argument's reason is stored", async () => {
    const f = await fixture();
    const audit = { actor: 'ops', reason: 'INC-42', dryRun: true };
    const result = await createOutboxAdmin(t.db).forTenant('acme').markFailed(f.pending, 'poison', audit);
    expect(result).toMatchObject({ id: f.pending, outcome: 'applied' });
    const { items } = await createAuditLog(t.db).list({ id: f.pending });
    expect(items).toMatchObject([{ dryRun: true, action: 'outbox.mark-failed', reason: 'poison' }]);
  });
});
