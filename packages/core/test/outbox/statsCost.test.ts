/**
 * The outbox's stats (admin `stats()`, and the metrics scrape through eventStatsByTenant) and a
 * tenant's purge of SENT rows do work bounded by what they report or delete: not by the SENT
 * history, and not by other tenants' rows. The unfinished statuses (PENDING, PROCESSING, FAILED)
 * are counted exactly through their partial indexes; SENT rows are counted exactly only up to a
 * limit (here 1,000), beyond it estimated from PostgreSQL's statistics.
 *
 * Work as in test/outbox/maintenanceCost.test.ts (planWork): rows every plan node produced and
 * filtered out, times its loops; on custom plans and on the generic plan a named statement may
 * switch to, with statistics taken after the rows reached their state ('current', as autovacuum
 * leaves a table that grew its history slowly) and with none at all ('none', a new database).
 */
import type { SqlExecutor } from '@ferry/core';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase, emptyTable } from '../costDatabase';
import { purgeSentEvents } from '../../src/outbox/sql/adminQueries';
import { eventStats, eventStatsByTenant } from '../../src/outbox/sql/stats';
import { measureWork } from '../measuring';
import type { PlanKind } from '../planWork';
import {
  EXACT,
  historyCostCases,
  liveRowsReported,
  SMALL,
  type HistoryCase,
  type HistoryStatistics,
} from '../historyCost';

let t: TestDatabase;
beforeAll(async () => {
  t = await costDatabase('outbox_events');
});
afterAll(async () => {
  await t.drop();
});

/**
 * `history` SENT rows of ten other tenants (published two days ago), tenant a's 300 SENT rows of
 * the same age, and the same unfinished rows every time: 200 PENDING, 50 PROCESSING (half of them
 * with expired leases) and 100 FAILED, spread over tenant a and four others.
 */
async function populate(history: number, statistics: HistoryStatistics): Promise<void> {
  // One connection, its statistics reported before the ANALYZE: a pooled writer reports its
  // inserts when it goes idle (up to seconds later), and a report after the ANALYZE counted them
  // twice (a CI run read an estimate of 4,950 for 2,650 rows).
  await t.db.transaction(async (db) => {
    await emptyTable(db, 'outbox_events', statistics === 'none');
    await db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, tenant_id, status, published_at,
         created_at)
       SELECT gen_random_uuid(), 'cost.sent', '{}', 5, CASE WHEN g <= 300 THEN 'a' ELSE 't' || g % 10 END,
              'SENT', now() - interval '2 days', now() - interval '3 days'
       FROM generate_series(1, $1::int + 300) g`,
      [history],
    );
    await db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, tenant_id, status, claim_token,
         lease_expires_at, claimed_at, failed_at, created_at)
       SELECT gen_random_uuid(), 'cost.' || lower(s), '{}', 5, CASE WHEN g % 5 = 0 THEN 'a' ELSE 'u' || g % 5 END,
              s, CASE WHEN s = 'PROCESSING' THEN gen_random_uuid() END,
              CASE WHEN s = 'PROCESSING' THEN now() + (g % 2 * 2 - 1) * interval '1 hour' END,
              CASE WHEN s = 'PROCESSING' THEN now() END, CASE WHEN s = 'FAILED' THEN now() END,
              now() - interval '1 minute'
       FROM (VALUES ('PENDING', 200), ('PROCESSING', 50), ('FAILED', 100)) v(s, n), generate_series(1, v.n) g`,
    );
    await db.execute('SELECT pg_stat_force_next_flush()');
  });
  if (statistics === 'current') await t.db.execute('ANALYZE outbox_events');
}

/** The work of `run`'s statements under `plan` (measureWork). */
async function measure(plan: PlanKind, run: (db: SqlExecutor) => Promise<unknown>): Promise<number> {
  return (await measureWork(t.url, t.db, plan, run)).work;
}

/**
 * Without statistics (a table autovacuum has not analyzed yet) the planner takes SENT rows for
 * 0.5% of the table: the operator's and the metrics' bounded count of SENT rows may then read a
 * bitmap of outbox_events_sent_idx, every SENT entry once, LIMIT or not (index entries only, no
 * heap); and a tenant's purge a bitmap of all the tenant's own old rows, sorted, instead of the
 * first `limit` of them in index order (its own rows, never another tenant's). Both go with the
 * first analysis; those cases are measured with statistics only.
 */
const CASES: readonly HistoryCase[] = [
  { name: "the operator's stats", run: (db) => eventStats(db, null, EXACT), withoutStatistics: false },
  { name: "tenant a's stats", run: (db) => eventStats(db, 'a', EXACT) },
  {
    name: 'the metrics read (one row)',
    run: (db) => eventStatsByTenant(db, false, EXACT),
    withoutStatistics: false,
  },
  {
    name: 'the metrics read (by tenant)',
    run: (db) => eventStatsByTenant(db, true, EXACT),
    withoutStatistics: false,
  },
  {
    name: "tenant a's purge of 100 SENT rows",
    run: (db) =>
      purgeSentEvents(db, { tenantId: 'a', before: new Date(Date.now() - 86_400_000), limit: 100 }),
    withoutStatistics: false,
  },
];

describe('outbox stats and purge cost', () => {
  historyCostCases('SENT rows of other tenants', CASES, populate, measure);
});

describe('what the stats report', () => {
  it('counts SENT rows exactly up to the limit, and estimates them beyond it', async () => {
    await populate(SMALL, 'current');
    const exact = await eventStats(t.db, 'a', 10_000);
    expect(exact).toMatchObject({
      pending: 40,
      processing: 10,
      failed: 20,
      sent: 300,
      sent_estimated: false,
    });
    await liveRowsReported(t.db, 'outbox_events', { analyzed: true });
    const whole = await eventStats(t.db, null, EXACT);
    expect(whole).toMatchObject({ pending: 200, processing: 50, failed: 100, expired_leases: 25 });
    expect(whole.sent_estimated).toBe(true);
    // An estimate from the statistics: more than the limit, near the 2,300 there are.
    expect(whole.sent).toBeGreaterThan(EXACT);
    expect(whole.sent).toBeGreaterThan(1_500);
    expect(whole.sent).toBeLessThan(3_500);
    const byTenant = await eventStatsByTenant(t.db, true, 10_000);
    expect(byTenant.find((row) => row.tenant === 'a')).toMatchObject({ sent: 300, pending: 40 });
    expect(byTenant.filter((row) => row.tenant.startsWith('t'))).toHaveLength(10);
    // Beyond the limit: one row's SENT is the estimate; no tenant's SENT is counted.
    const [table] = await eventStatsByTenant(t.db, false, EXACT);
    expect(table).toMatchObject({ tenant: '', pending: 200, sent_estimated: true });
    expect(table!.sent).toBeGreaterThan(1_500);
    const tenants = await eventStatsByTenant(t.db, true, EXACT);
    expect(tenants.map((row) => row.sent)).toEqual(tenants.map(() => null));
    expect(tenants.find((row) => row.tenant === 'a')).toMatchObject({ pending: 40, failed: 20 });
  });

  it("purges only the tenant's SENT rows published before the cutoff, oldest first", async () => {
    await populate(SMALL, 'current');
    const before = new Date(Date.now() - 86_400_000);
    expect(await purgeSentEvents(t.db, { tenantId: 'a', before, limit: 250 })).toBe(250);
    expect(await purgeSentEvents(t.db, { tenantId: 'a', before, limit: 250 })).toBe(50);
    expect(await purgeSentEvents(t.db, { tenantId: 'a', before: new Date(), limit: 250 })).toBe(0);
    const [left] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
    );
    expect(left!.n).toBe(SMALL);
  });
});
