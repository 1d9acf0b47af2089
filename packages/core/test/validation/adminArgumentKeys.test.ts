import { randomUUID } from 'node:crypto';
import {
  createAuditLog,
  createOutboxAdmin,
  FerryValidationError,
  InboxAdmin,
  InboxPrivilegedAdmin,
  type InboxScopedAdmin,
  type OutboxAdmin,
} from '@ferry/core';
import { useAdminDatabase, type AdminFixture, type InboxRows } from '../../../../test-support/adminFixture';
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
const database = useAdminDatabase();
const { fixture, state } = database;
const db = () => database.t().db;
type Fixture = AdminFixture;

const outboxScopes: Array<[string, () => OutboxAdmin]> = [
  ['outbox', () => createOutboxAdmin(db())],
  ['outbox forTenant', () => createOutboxAdmin(db()).forTenant('acme')],
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
  ['inbox forTenant', (f) => [new InboxAdmin(db()).forTenant('acme'), f.tenant]],
  ['inbox forGlobal', (f) => [new InboxAdmin(db()).forGlobal(), f.global]],
  [
    'inbox privileged scopeOf',
    (f) => [
      new InboxPrivilegedAdmin(db(), { privilegedAdmin: true }).scopeOf({ tenantId: 'acme' }),
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

const privileged = () => new InboxPrivilegedAdmin(db(), { privilegedAdmin: true });
const auditLog = () => createAuditLog(db());

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
      createOutboxAdmin(db()).retry(f.failed, { actor: 'ops', dryrun: true } as never),
    );
    expect(error).toBeInstanceOf(FerryValidationError);
    expect(error.message).toMatch(/dryrun.*did you mean dryRun/);
    const [row] = await db().query<{ status: string }>(
      'SELECT status FROM outbox_events WHERE id = $1::uuid',
      [f.failed],
    );
    expect(row?.status).toBe('FAILED');
    const { items } = await createAuditLog(db()).list({ id: f.failed });
    expect(items).toEqual([]);
  });

  it('inbox requeue({ ..., dry_run: true }): the receipt stays DEAD and no audit row names it', async () => {
    const f = await fixture();
    const error = await validationErrorOf(() =>
      new InboxAdmin(db())
        .forTenant('acme')
        .requeue({ ...f.tenant.dead, actor: 'ops', reason: 'fixed', dry_run: true } as never),
    );
    expect(error.message).toMatch(/dry_run.*did you mean dryRun/);
    const [row] = await db().query<{ status: string }>(
      'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [f.tenant.dead.id],
    );
    expect(row?.status).toBe('DEAD');
    expect((await createAuditLog(db()).list({ id: f.tenant.dead.id })).items).toEqual([]);
  });

  it('the documented keys pass: a real dryRun is audited as a dry run and changes nothing', async () => {
    const f = await fixture();
    const [result] = await createOutboxAdmin(db())
      .forTenant('acme')
      .retryMany([f.failed], { actor: 'ops', reason: 'check', dryRun: true });
    expect(result).toEqual({ id: f.failed, outcome: 'applied' });
    const { items } = await createAuditLog(db()).list({ id: f.failed });
    expect(items).toMatchObject([{ dryRun: true, action: 'outbox.retry' }]);
  });

  it("markFailed's audit takes the documented actor and dryRun: a `reason` there is refused (review 70), the argument's reason is stored", async () => {
    const f = await fixture();
    const admin = createOutboxAdmin(db()).forTenant('acme');
    const withReason = { actor: 'ops', reason: 'INC-42', dryRun: true } as { actor: string };
    await expect(admin.markFailed(f.pending, 'poison', withReason)).rejects.toMatchObject({
      code: 'FERRY_VALIDATION_FAILED',
      field: 'reason',
      message: 'invalid reason: is not an argument of markFailed (known: actor, dryRun)',
    });
    const result = await admin.markFailed(f.pending, 'poison', { actor: 'ops', dryRun: true });
    expect(result).toMatchObject({ id: f.pending, outcome: 'applied' });
    const { items } = await createAuditLog(db()).list({ id: f.pending });
    expect(items).toMatchObject([{ dryRun: true, action: 'outbox.mark-failed', reason: 'poison' }]);
  });
});
