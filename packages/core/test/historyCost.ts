/**
 * The cases of test/outbox/statsCost.test.ts and test/inbox/statsCost.test.ts: statements whose
 * work must not grow with a table's history (SENT rows, COMPLETED receipts) of other tenants.
 */
import type { SqlExecutor } from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import type { CostTable } from './costDatabase';
import type { PlanKind } from './planWork';

/** 'current': analyzed after the rows reached their state; 'none': never analyzed. */
export type HistoryStatistics = 'current' | 'none';

/** History rows beyond which the statements estimate instead of counting. */
export const EXACT = 1_000;
/** The history beside which a statement is measured, then ten times as much. */
export const SMALL = 2_000;
export const LARGE = 20_000;

export interface HistoryCase {
  readonly name: string;
  readonly run: (db: SqlExecutor) => Promise<unknown>;
  /** Also measured on a table without statistics (default true). */
  readonly withoutStatistics?: boolean;
}

/**
 * Each case on custom and generic plans, under both statistics: its work (`measure`) beside
 * SMALL and LARGE history (`populate`) the same, give or take a B-tree level.
 */
export function historyCostCases(
  history: string,
  cases: readonly HistoryCase[],
  populate: (history: number, statistics: HistoryStatistics) => Promise<void>,
  measure: (plan: PlanKind, run: HistoryCase['run']) => Promise<number>,
): void {
  describe.each(['custom', 'generic'] as const)('%s plans', (plan) => {
    describe.each(['current', 'none'] as const)('statistics %s', (statistics) => {
      const measured = cases.filter((c) => statistics === 'current' || c.withoutStatistics !== false);
      it.each(measured.map((c) => [c.name, c] as const))(
        `%s: the same work beside ${SMALL.toLocaleString('en')} or ${LARGE.toLocaleString('en')} ${history}`,
        async (_name, c) => {
          await populate(SMALL, statistics);
          const small = await measure(plan, c.run);
          await populate(LARGE, statistics);
          const large = await measure(plan, c.run);
          expect(small).toBeGreaterThan(0);
          expect(large).toBeLessThan(small * 1.5);
        },
        60_000,
      );
    });
  });
}

/**
 * Waits until PostgreSQL's statistics system counts `table`'s rows as they are: a backend reports
 * what it wrote within about a second of going idle, sometimes later, and the estimates read it.
 * `analyzed`: the table was analyzed right after it was written (statistics 'current'). An ANALYZE
 * sets the live count to what it counted, and a pooled connection that wrote the rows reports them
 * after it, adding them a second time: the count then never matches (a CI run waited 30 s). Such
 * a table is analyzed again while the count is off, which sets it right once every writer reported.
 */
export async function liveRowsReported(
  db: SqlExecutor,
  table: CostTable,
  options: { analyzed?: boolean } = {},
): Promise<void> {
  await waitUntil(
    `${table}'s live rows reported`,
    async () => {
      const [row] = await db.query<{ reported: boolean }>(
        `SELECT pg_stat_get_live_tuples('${table}'::regclass) = (SELECT count(*) FROM ${table}) AS reported`,
      );
      if (row?.reported !== true && options.analyzed === true) await db.execute(`ANALYZE ${table}`);
      return row?.reported === true;
    },
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}
