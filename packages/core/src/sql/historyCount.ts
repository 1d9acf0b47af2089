/**
 * Counting a table's history (outbox SENT rows, inbox COMPLETED receipts) for stats without
 * reading all of it: exactly while there are at most HISTORY_EXACT_LIMIT rows (a read bounded by
 * the limit), beyond it an estimate from PostgreSQL's statistics (no rows read at all). The
 * unfinished statuses are counted exactly elsewhere, through their partial indexes.
 */
import type { SqlExecutor } from './executor';

/** History rows a stats read counts exactly; beyond it they are estimated. */
export const HISTORY_EXACT_LIMIT = 10_000;

/**
 * A column counting the rows of `rows` (a SELECT of one row per history row), reading at most
 * `limitParam` of them (the caller passes the limit + 1): put beside the unfinished counts in the
 * same statement, so that both come from one snapshot. A row that finished between two statements
 * was counted twice (unfinished in the first, history in the second).
 */
export function historyCount(rows: string, limitParam: string): string {
  return `(SELECT count(*)::float8 FROM (${rows} LIMIT ${limitParam}::bigint) r)`;
}

/** historyCount's answer: the count, or null when there were more than `limit` rows. */
export function exactUpTo(counted: unknown, limit: number): number | null {
  const n = Number(counted ?? 0);
  return n > limit ? null : n;
}

// The table's live rows as the statistics system last counted them (kept current as transactions
// commit, within about a second; a purge lowers it at once), else, when it has counted none (no
// activity since a restart), the planner's row count (lowered only by VACUUM / ANALYZE, so never
// preferred: it kept a purged table at its old size). $2 a column, $3 a value: the share of the
// table's rows holding it, from pg_stats (its most common values, else an even share of the
// rest); null without statistics.
const ESTIMATE = `
  SELECT (CASE WHEN pg_stat_get_live_tuples(c.oid) > 0 THEN pg_stat_get_live_tuples(c.oid)
               ELSE greatest(c.reltuples, 0) END)::float8 AS live,
    (SELECT coalesce(
       (SELECT m.f FROM unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS m(v, f) WHERE m.v = $3),
       (1 - s.null_frac - coalesce((SELECT sum(f) FROM unnest(s.most_common_freqs) AS f), 0))
         / greatest(1, CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * greatest(c.reltuples, 1) ELSE s.n_distinct END
                       - coalesce(cardinality(s.most_common_freqs), 0)))::float8
     FROM pg_stats s
     WHERE s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = $2) AS share
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.oid = to_regclass($1)`;

/**
 * An estimate of the history rows of `table` (more than `limit`, since an exact count stopped
 * there): its live rows (a `column` = `value` share of them when scoped) less the `unfinished`
 * rows of the same scope, counted exactly. Never below `limit` + 1.
 */
export async function estimateHistory(
  db: SqlExecutor,
  args: {
    table: string;
    scope: { column: string; value: string } | null;
    unfinished: number;
    limit: number;
  },
): Promise<number> {
  const [row] = await db.query<{ live: number; share: number | null }>(ESTIMATE, [
    args.table,
    args.scope?.column ?? null,
    args.scope?.value ?? null,
  ]);
  const live = Number(row?.live ?? 0);
  const share = args.scope === null ? 1 : Number(row?.share ?? 0);
  return Math.max(args.limit + 1, Math.round(live * share - args.unfinished));
}
