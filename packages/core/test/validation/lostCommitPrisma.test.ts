/**
 * lostCommitAnswer.test.ts on Prisma (ferry's main client): an audited retry whose COMMIT answer
 * is lost is reported applied and audited once when PostgreSQL can say so, and fails with
 * FERRY_OUTCOME_UNKNOWN (no `error` audit row) when it cannot.
 */
import { createOutboxAdmin, emit, fromPrisma, isFerryError } from '@ferry/core';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../../test-support/commitSwallowingProxy';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
let proxy: CommitSwallowingProxy;
let prisma: ReturnType<typeof prismaFor>;
beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  proxy = await commitSwallowingProxy();
  prisma = prismaFor(proxy.url(t.url));
});
afterEach(async () => {
  proxy.close();
  await prisma.$disconnect().catch(() => undefined);
});
afterAll(async () => {
  await t.drop();
});

async function failedEvent(tenantId: string): Promise<string> {
  await emit(t.db, { type: 'lost-commit', payload: {}, tenantId });
  const [event] = await t.db.query<{ id: string }>(
    `UPDATE outbox_events SET status = 'FAILED', failed_at = now() WHERE tenant_id = $1 RETURNING id::text`,
    [tenantId],
  );
  return event!.id;
}

async function state(id: string, tenantId: string): Promise<{ status?: string; audit: string[] }> {
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  const audit = await t.db.query<{ outcome: string }>(
    `SELECT outcome FROM ferry_operator_audit WHERE action = 'outbox.retry' AND scope = $1 ORDER BY id`,
    [`tenant:${tenantId}`],
  );
  return { status: row?.status, audit: audit.map((a) => a.outcome) };
}

it('Prisma: a retry whose COMMIT answer is lost is reported applied and audited once', async () => {
  const id = await failedEvent('answered');
  const admin = createOutboxAdmin(fromPrisma(prisma), { statementTimeoutMs: 500 });
  await admin.stats(); // connected
  proxy.arm();
  const result = await admin.forTenant('answered').retry(id, { actor: 'night-operator', reason: 'paged' });
  expect(proxy.swallowed()).toBe(true);
  expect(result).toMatchObject({ outcome: 'applied' });
  expect(await state(id, 'answered')).toEqual({ status: 'PENDING', audit: ['applied'] });
});

it('Prisma: a retry whose COMMIT answer is lost while PostgreSQL cannot be asked is FERRY_OUTCOME_UNKNOWN, not audited as an error', async () => {
  const id = await failedEvent('partitioned');
  const admin = createOutboxAdmin(fromPrisma(prisma), { statementTimeoutMs: 500 });
  await admin.stats();
  proxy.arm({ everything: true });
  const error = await admin
    .forTenant('partitioned')
    .retry(id)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(proxy.swallowed()).toBe(true);
  expect(isFerryError(error, 'FERRY_OUTCOME_UNKNOWN')).toBe(true);
  expect(error).toMatchObject({ retriable: false, details: { outcome: 'unknown' } });
  proxy.heal();
  expect(await state(id, 'partitioned')).toEqual({ status: 'PENDING', audit: ['applied'] });
});

it('Prisma: a retry whose COMMIT never reached PostgreSQL fails retriable and is not applied', async () => {
  const id = await failedEvent('dropped');
  const admin = createOutboxAdmin(fromPrisma(prisma), { statementTimeoutMs: 500 });
  await admin.stats();
  proxy.arm({ dropCommit: true });
  const error = await admin
    .forTenant('dropped')
    .retry(id)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(proxy.swallowed()).toBe(true);
  // PostgreSQL ended the idle session (idle_in_transaction_session_timeout) and rolled it back;
  // asked afterwards, it says aborted: the failure as it came, retriable.
  expect(isFerryError(error)).toBe(true);
  expect(error).toMatchObject({ retriable: true });
  const after = await state(id, 'dropped');
  expect(after.status).toBe('FAILED');
  expect(after.audit).not.toContain('applied');
});
