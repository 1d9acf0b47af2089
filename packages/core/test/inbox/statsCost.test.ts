/**
 * The inbox's stats (admin `stats()`, the health details, and the metrics scrape through
 * readStatsByConsumer) and a tenant's purge of completed payloads do work bounded by what they
 * report or change: not by the COMPLETED history, and not by other tenants' receipts. The other
 * statuses (PENDING, RETRYABLE, PROCESSING, DEAD) are counted exactly through partial indexes;
 * COMPLETED receipts exactly only up to a limit (here 1,000), beyond it estimated from
 * PostgreSQL's statistics. Work and statistics as in test/outbox/statsCost.test.ts.
 */
import type { SqlExecutor } from '@ferry/core';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase, emptyTable } from '../costDatabase';
import { purgeCompleted } from '../../src/inbox/sql/purgeCompleted';
import { readStats, readStatsByConsumer } from '../../src/inbox/sql/stats';
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
  t = await costDatabase('ferry_inbox_receipts');
});
afterAll(() => t.drop());

/**
 * `history` receipts of ten other tenants COMPLETED two days ago, tenant acme's 300 of the same
 * age, and the same unfinished receipts every time: 200 PENDING, 40 RETRYABLE, 50 PROCESSING (half
 * of them with expired leases) and 60 DEAD, over four consumers, tenant acme and four others.
 */
async function populate(history: number, statistics: HistoryStatistics): Promise<void> {
  // One connection, its statistics reported before the ANALYZE: a pooled writer reports its
  // inserts when it goes idle (up to seconds later), and a report after the ANALYZE counted them
  // twice (a CI run read an estimate of 4,950 for 2,650 rows).
  await t.db.transaction(async (db) => {
    await emptyTable(db, 'ferry_inbox_receipts', statistics === 'none');
    await db.execute(
      `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
         payload_bytes, max_attempts, status, attempts, completed_at, created_at)
       SELECT CASE WHEN g <= 300 THEN 'acme' ELSE 't' || g % 10 END, 'c-' || g % 4, 'h-' || g, '{}', 'f', 2, 3,
              'COMPLETED', 1, now() - interval '2 days', now() - interval '2 days'
       FROM generate_series(1, $1::int + 300) g`,
      [history],
    );
    await db.execute(
      `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
         payload_bytes, max_attempts, status, attempts, claim_token, lease_expires_at, dead_at, created_at)
       SELECT CASE WHEN g % 5 = 0 THEN 'acme' ELSE 'u' || g % 5 END, 'c-' || g % 4, s || '-' || g, '{}', 'f', 2, 3,
              s, CASE WHEN s IN ('PENDING', 'RETRYABLE') THEN 0 ELSE 1 END,
              CASE WHEN s = 'PROCESSING' THEN gen_random_uuid() END,
              CASE WHEN s = 'PROCESSING' THEN now() + (g % 2 * 2 - 1) * interval '1 hour' END,
              CASE WHEN s = 'DEAD' THEN now() END, now() - interval '1 minute'
       FROM (VALUES ('PENDING', 200), ('RETRYABLE', 40), ('PROCESSING', 50), ('DEAD', 60)) v(s, n),
            generate_series(1, v.n) g`,
    );
    await db.execute('SELECT pg_stat_force_next_flush()');
  });
  if (statistics === 'current') await t.db.execute('ANALYZE ferry_inbox_receipts');
}

/** The work of `run`'s statements under `plan` (measureWork). */
async function measure(plan: PlanKind, run: (db: SqlExecutor) => Promise<unknown>): Promise<number> {
  return (await measureWork(t.url, t.db, plan, run)).work;
}

const CASES: readonly HistoryCase[] = [
  { name: 'the privileged stats (every scope)', run: (db) => readStats(db, null, EXACT) },
  { name: "tenant acme's stats", run: (db) => readStats(db, 'tenant:acme', EXACT) },
  { name: 'the metrics read (by consumer)', run: (db) => readStatsByConsumer(db, false, EXACT) },
  { name: 'the metrics read (by consumer and tenant)', run: (db) => readStatsByConsumer(db, true, EXACT) },
  {
    name: "tenant acme's purge of 100 completed payloads",
    run: (db) => purgeCompleted(db, 'tenant:acme', new Date(Date.now() - 86_400_000), 100),
  },
];

describe('inbox stats and purge cost', () => {
  historyCostCases('COMPLETED receipts of other tenants', CASES, populate, measure);
});

describe('what the stats report', () => {
  it('counts COMPLETED receipts exactly up to the limit, and estimates them beyond it', async () => {
    await populate(SMALL, 'current');
    const exact = await readStats(t.db, 'tenant:acme', 10_000);
    expect(exact.counts).toEqual({ PENDING: 40, RETRYABLE: 8, PROCESSING: 10, COMPLETED: 300, DEAD: 12 });
    expect(exact).toMatchObject({ total: 370, expiredLeases: 5, completedEstimated: false });
    await liveRowsReported(t.db, 'ferry_inbox_receipts', { analyzed: true });
    const every = await readStats(t.db, null, EXACT);
    expect(every.counts).toMatchObject({ PENDING: 200, RETRYABLE: 40, PROCESSING: 50, DEAD: 60 });
    expect(every).toMatchObject({ expiredLeases: 25, completedEstimated: true });
    expect(every.counts.COMPLETED).toBeGreaterThan(1_500);
    expect(every.counts.COMPLETED).toBeLessThan(3_500);
    const groups = await readStatsByConsumer(t.db, true, 10_000);
    const acme = groups.filter((g) => g.tenant === 'acme');
    expect(acme.reduce((n, g) => n + (g.counts.COMPLETED ?? 0), 0)).toBe(300);
    expect(acme.reduce((n, g) => n + (g.counts.DEAD ?? 0), 0)).toBe(12);
    // Beyond the limit, no group reports a COMPLETED count it did not read.
    const over = await readStatsByConsumer(t.db, false, EXACT);
    expect(over.map((g) => g.counts.COMPLETED)).toEqual([null, null, null, null]);
    expect(over.reduce((n, g) => n + (g.counts.PENDING ?? 0), 0)).toBe(200);
  });
});
