/**
 * An audited admin mutation whose COMMIT reached PostgreSQL but whose answer never came back
 * (node-postgres; lostCommitPrisma.test.ts on Prisma). Once the COMMIT was sent, the outcome is
 * PostgreSQL's: withDeadlines asks it (txid_status of the transaction) instead of reporting a
 * retriable FERRY_TIMEOUT, the audit trail holds one row for the one action, and the connection
 * that lost its answer is closed, not held out of the pool for good. When PostgreSQL cannot be
 * asked either, the caller gets FERRY_OUTCOME_UNKNOWN (not retriable, `details.outcome: 'unknown'`)
 * and no `error` audit row is written beside the committed one.
 */
import pg from 'pg';
import { createOutboxAdmin, emit, FerryError, fromPg, isFerryError, type SqlExecutor } from '@ferry/core';
import { audited } from '../../src/audit/audited';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../../test-support/commitSwallowingProxy';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

const APPLICATION = 'ferry-lost-commit';

let t: TestDatabase;
let proxy: CommitSwallowingProxy;
let pool: pg.Pool;
beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  proxy = await commitSwallowingProxy();
  pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 4, application_name: APPLICATION });
  pool.on('error', () => undefined); // the proxy's doing
});
afterEach(async () => {
  proxy.close();
  await pool.end().catch(() => undefined);
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

async function statusOf(id: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [
    id,
  ]);
  return row?.status;
}

async function auditOutcomes(tenantId: string): Promise<string[]> {
  const rows = await t.db.query<{ outcome: string }>(
    `SELECT outcome FROM ferry_operator_audit WHERE action = 'outbox.retry' AND scope = $1 ORDER BY id`,
    [`tenant:${tenantId}`],
  );
  return rows.map((row) => row.outcome);
}

/** True once no session of the pool is left on the server; false if one is still there after 10 s. */
async function sessionsEnd(): Promise<boolean> {
  for (const until = Date.now() + 10_000; Date.now() < until;) {
    const [row] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [APPLICATION],
    );
    if (row?.n === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

it('a retry whose COMMIT answer is lost is reported applied, audited once, and gives its connection back', async () => {
  const id = await failedEvent('answered');
  const admin = createOutboxAdmin(fromPg(pool), { statementTimeoutMs: 500 });
  proxy.arm();
  const result = await admin.forTenant('answered').retry(id, { actor: 'night-operator', reason: 'paged' });
  expect(proxy.swallowed()).toBe(true);
  expect(result).toMatchObject({ outcome: 'applied' });
  expect(await statusOf(id)).toBe('PENDING');
  expect(await auditOutcomes('answered')).toEqual(['applied']);
  // The connection that lost the COMMIT's answer was closed, not kept checked out.
  expect(pool.totalCount - pool.idleCount).toBe(0);
});

it('a retry whose COMMIT answer is lost while PostgreSQL cannot be asked is FERRY_OUTCOME_UNKNOWN, not audited as an error', async () => {
  const id = await failedEvent('partitioned');
  const admin = createOutboxAdmin(fromPg(pool), { statementTimeoutMs: 500 });
  proxy.arm({ everything: true });
  const error = await admin
    .forTenant('partitioned')
    .retry(id, { actor: 'night-operator' })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(proxy.swallowed()).toBe(true);
  expect(isFerryError(error, 'FERRY_OUTCOME_UNKNOWN')).toBe(true);
  expect(error).toMatchObject({ retriable: false, details: { outcome: 'unknown' } });
  proxy.heal();
  // It was applied: the committed audit row is the only one.
  expect(await statusOf(id)).toBe('PENDING');
  expect(await auditOutcomes('partitioned')).toEqual(['applied']);
  // The connection that lost the answer was closed: its session ends (the lookup's connection,
  // made in the partition, never got as far as a session).
  await expect(sessionsEnd()).resolves.toBe(true);
});

it('a retry whose COMMIT never reached PostgreSQL fails retriable and is not applied', async () => {
  const id = await failedEvent('dropped');
  const admin = createOutboxAdmin(fromPg(pool), { statementTimeoutMs: 500 });
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
  expect(await statusOf(id)).toBe('FAILED');
  expect(await auditOutcomes('dropped')).not.toContain('applied');
});

it('audited() writes no error row for an action whose outcome is unknown', async () => {
  // The caller's executor committed the action, then lost the answer (as withDeadlines reports it).
  const lost: SqlExecutor = {
    ...t.db,
    inTransaction: false,
    transaction: async (work, options) => {
      await t.db.transaction(work, options);
      throw new FerryError('FERRY_OUTCOME_UNKNOWN', 'the COMMIT was sent and its answer lost', {
        details: { outcome: 'unknown' },
      });
    },
  };
  const error = await audited(lost, {
    action: 'test.unknown',
    scope: 'operator',
    ids: ['x'],
    options: undefined,
    run: async () => 'applied',
    summarize: (outcome) => ({ outcome, results: {} }),
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isFerryError(error, 'FERRY_OUTCOME_UNKNOWN')).toBe(true);
  const rows = await t.db.query<{ outcome: string }>(
    `SELECT outcome FROM ferry_operator_audit WHERE action = 'test.unknown' ORDER BY id`,
  );
  expect(rows.map((row) => row.outcome)).toEqual(['applied']);
});
