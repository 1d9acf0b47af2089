/**
 * A stats read is one snapshot. Each read counted the unfinished statuses in one statement and the
 * history (inbox COMPLETED, outbox SENT) in the next, so a row that finished between the two was
 * counted in both (PROCESSING, then COMPLETED) and a read taken while a worker or relay ran
 * reported more rows than the table held: `total` above what was accepted, a dashboard's sum of
 * statuses jumping. Here the executor lets a row finish, on another connection, right after the
 * read's first statement: every count must still add up to the rows in the table.
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import type { SqlExecutor } from '../../src/sql/executor';
import { readStats, readStatsByConsumer } from '../../src/inbox/sql/stats';
import { eventStats, eventStatsByTenant } from '../../src/outbox/sql/stats';

const ROWS = 5;
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** `db`, running `between` once, right after its first statement answered. */
function interleaved(db: SqlExecutor, between: () => Promise<unknown>): SqlExecutor & { statements: number } {
  let statements = 0;
  const wrapped: SqlExecutor & { statements: number } = {
    get statements() {
      return statements;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    async query(text, values, options) {
      const rows = await db.query(text, values, options);
      if (++statements === 1) await between();
      return rows as never;
    },
    async execute(text, values, options) {
      const n = await db.execute(text, values, options);
      if (++statements === 1) await between();
      return n;
    },
    transaction: (work, options) => db.transaction(work, options),
  };
  return wrapped;
}

describe('inbox', () => {
  const finishOne = () =>
    t.db.execute(
      `UPDATE ferry_inbox_receipts SET status = 'COMPLETED', claim_token = NULL, lease_expires_at = NULL,
         completed_at = now() WHERE id = (SELECT id FROM ferry_inbox_receipts WHERE status = 'PROCESSING' LIMIT 1)`,
    );
  beforeEach(async () => {
    await t.db.execute('DELETE FROM ferry_inbox_receipts');
    await t.db.execute(
      `INSERT INTO ferry_inbox_receipts (consumer, tenant_id, message_id, payload, payload_fingerprint,
         payload_bytes, max_attempts, status, attempts, claim_token, lease_expires_at)
       SELECT 'snap', 'acme', 'm-' || i, '{}', 'f', 2, 5, 'PROCESSING', 1, gen_random_uuid(), now() + interval '1 hour'
       FROM generate_series(1, ${ROWS}) i`,
    );
  });

  it.each([
    ['every scope', null],
    ['one scope', 'tenant:acme'],
  ])('admin stats (%s) count a receipt that completes during the read once', async (_name, scope) => {
    const stats = await readStats(interleaved(t.db, finishOne), scope);
    expect(stats.total).toBe(ROWS);
    expect(stats.counts.PROCESSING + stats.counts.COMPLETED).toBe(ROWS);
  });

  it.each([false, true])('the metrics read (by tenant: %s) counts it once', async (byTenant) => {
    const groups = await readStatsByConsumer(interleaved(t.db, finishOne), byTenant);
    const total = groups.reduce(
      (n, g) => n + Object.values(g.counts).reduce<number>((a, b) => a + (b ?? 0), 0),
      0,
    );
    expect(total).toBe(ROWS);
  });
});

describe('outbox', () => {
  const sendOne = () =>
    t.db.execute(
      `UPDATE outbox_events SET status = 'SENT', published_at = now(), claim_token = NULL,
         lease_expires_at = NULL, claimed_at = NULL
       WHERE id = (SELECT id FROM outbox_events WHERE status = 'PROCESSING' LIMIT 1)`,
    );
  beforeEach(async () => {
    await t.db.execute('DELETE FROM outbox_events');
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, tenant_id, max_retries, status, claim_token,
         lease_expires_at, claimed_at)
       SELECT gen_random_uuid(), 'snap', '{}', 'acme', 5, 'PROCESSING', gen_random_uuid(),
         now() + interval '1 hour', now()
       FROM generate_series(1, ${ROWS})`,
    );
  });
  const sum = (row: { pending: number; processing: number; failed: number; sent: number | null }) =>
    Number(row.pending) + Number(row.processing) + Number(row.failed) + Number(row.sent ?? 0);

  it.each([
    ['every tenant', null],
    ['one tenant', 'acme'],
  ])('admin stats (%s) count an event sent during the read once', async (_name, tenantId) => {
    expect(sum(await eventStats(interleaved(t.db, sendOne), tenantId))).toBe(ROWS);
  });

  it.each([false, true])('the metrics read (by tenant: %s) counts it once', async (byTenant) => {
    const rows = await eventStatsByTenant(interleaved(t.db, sendOne), byTenant);
    expect(rows.reduce((n, row) => n + sum(row), 0)).toBe(ROWS);
  });
});
