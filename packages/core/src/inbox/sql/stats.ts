import type { SqlExecutor } from '../../sql/executor';
import { estimateHistory, exactUpTo, historyCount, HISTORY_EXACT_LIMIT } from '../../sql/historyCount';
import { INBOX_STATUSES, type InboxStatus } from '../types';
import { TABLE } from './fragments';
import { msSince } from '../../sql/msSince';
import { dateMs, maybeDateOf, type DateMs } from '../../sql/dateColumn';

export interface InboxStats {
  /**
   * Receipts per status. COMPLETED is exact up to 10,000 (HISTORY_EXACT_LIMIT) in the scope and
   * PostgreSQL's estimate beyond it (`completedEstimated`); the other statuses are always exact.
   */
  readonly counts: Readonly<Record<InboxStatus, number>>;
  readonly total: number;
  /** `counts.COMPLETED` (and so `total`) is an estimate. */
  readonly completedEstimated: boolean;
  /** Creation time of the oldest PENDING / RETRYABLE / PROCESSING receipt. */
  readonly oldestPendingAt: Date | null;
  /** Its age on the database clock, in milliseconds. */
  readonly oldestPendingAgeMs: number | null;
  /** PROCESSING receipts whose lease expired (a dead worker's claims; see admin release()). */
  readonly expiredLeases: number;
}

/**
 * Every receipt but the COMPLETED history, one arm per status so that each reads a partial index
 * (PENDING / RETRYABLE: ferry_inbox_receipts_due, PROCESSING: ferry_inbox_receipts_leases, DEAD:
 * ferry_inbox_receipts_dead), or a scope's range of ferry_inbox_receipts_admin; $1 the scope.
 */
const UNFINISHED_STATUSES = ['PENDING', 'RETRYABLE', 'PROCESSING', 'DEAD'] as const;
const open = (scoped: boolean) =>
  UNFINISHED_STATUSES.map(
    (status) => `SELECT consumer, tenant_id, status, lease_expires_at, created_at FROM ${TABLE}
    WHERE status = '${status}' AND ${scoped ? 'scope = $1::text' : '$1::text IS NULL'}`,
  ).join('\n  UNION ALL ');

const COUNTS = `
    ${UNFINISHED_STATUSES.map((s) => `count(*) FILTER (WHERE status = '${s}')::float8 AS "${s}"`).join(',\n    ')},
    ${dateMs(`min(created_at) FILTER (WHERE status <> 'DEAD')`)} AS oldest,
    ${msSince(`min(created_at) FILTER (WHERE status <> 'DEAD')`)}::float8 AS age_ms,
    count(*) FILTER (WHERE status = 'PROCESSING' AND lease_expires_at <= now())::float8 AS expired`;

// A scope's COMPLETED receipts through ferry_inbox_receipts_admin (scope, status, id), in its
// order: a generic plan otherwise took a bitmap of the scope's every receipt, or a sequential scan.
const SCOPE_COMPLETED = `SELECT 1 FROM ${TABLE} WHERE scope = $1::text AND status = 'COMPLETED'
  ORDER BY scope, status, id`;
const COMPLETED = `SELECT consumer, tenant_id FROM ${TABLE} WHERE status = 'COMPLETED'`;

// The unfinished counts and the COMPLETED ones (reading at most $2) in one statement, one snapshot.
const STATS = [
  `SELECT ${COUNTS}, ${historyCount(COMPLETED, '$2')} AS completed FROM (${open(false)}) u`,
  `SELECT ${COUNTS}, ${historyCount(SCOPE_COMPLETED, '$2')} AS completed FROM (${open(true)}) u`,
];

type OpenCounts = Record<Exclude<InboxStatus, 'COMPLETED'>, number> & {
  oldest: DateMs | null;
  age_ms: number | null;
  expired: number;
};

function zeroCounts(): Record<InboxStatus, number> {
  return Object.fromEntries(INBOX_STATUSES.map((s) => [s, 0])) as Record<InboxStatus, number>;
}

/** One scope's receipts (every scope's when `scope` is null); see InboxStats. */
export async function readStats(
  db: SqlExecutor,
  scope: string | null,
  exactLimit: number = HISTORY_EXACT_LIMIT,
): Promise<InboxStats> {
  const [row] = await db.query<OpenCounts & { completed: number }>(STATS[scope === null ? 0 : 1]!, [
    scope,
    exactLimit + 1,
  ]);
  const counts = zeroCounts();
  for (const status of UNFINISHED_STATUSES) counts[status] = Number(row?.[status] ?? 0);
  const open = Object.values(counts).reduce((a, b) => a + b, 0);
  const completed = exactUpTo(row?.completed, exactLimit);
  counts.COMPLETED =
    completed ??
    (await estimateHistory(db, {
      table: TABLE,
      scope: scope === null ? null : { column: 'scope', value: scope },
      unfinished: open,
      limit: exactLimit,
    }));
  return {
    counts,
    total: open + counts.COMPLETED,
    completedEstimated: completed === null,
    oldestPendingAt: maybeDateOf(row?.oldest ?? null),
    oldestPendingAgeMs:
      row?.age_ms === null || row?.age_ms === undefined ? null : Math.round(Number(row.age_ms)),
    expiredLeases: Number(row?.expired ?? 0),
  };
}

/** Receipts of one consumer (and tenant, when grouped by tenant) by status. */
export interface InboxGroupStats {
  readonly consumer: string;
  /** '' for global receipts, or when not grouped by tenant. */
  readonly tenant: string;
  /**
   * COMPLETED is null when the table holds more than the exact limit of them (they are not
   * counted per group then); the other statuses are exact.
   */
  readonly counts: Readonly<Record<InboxStatus, number | null>>;
  /** Age of the oldest PENDING / RETRYABLE / PROCESSING receipt on the database clock; null when none. */
  readonly oldestUnfinishedAgeMs: number | null;
  readonly expiredLeases: number;
}

const GROUP = `consumer, CASE WHEN $2::boolean THEN coalesce(tenant_id, '') ELSE '' END AS tenant`;
/**
 * Per group, the unfinished counts (`has_open` when the group has any) and the COMPLETED receipts,
 * reading at most $3 of them (the caller asks for the limit + 1), in one statement: one snapshot.
 */
const BY_CONSUMER = `WITH unfinished AS (
    SELECT ${GROUP}, ${COUNTS} FROM (${open(false)}) u GROUP BY 1, 2
  ), completed AS (
    SELECT ${GROUP}, count(*)::float8 AS n FROM (${COMPLETED} LIMIT $3::bigint) c WHERE $1::text IS NULL GROUP BY 1, 2
  )
  SELECT coalesce(o.consumer, c.consumer) AS consumer, coalesce(o.tenant, c.tenant) AS tenant,
    o.consumer IS NOT NULL AS has_open, ${UNFINISHED_STATUSES.map((s) => `o."${s}"`).join(', ')},
    o.age_ms, o.expired, c.n
  FROM unfinished o FULL JOIN completed c ON c.consumer = o.consumer AND c.tenant = o.tenant`;

/**
 * Every scope's receipts per consumer (and per tenant when `byTenant`): the open statuses exactly,
 * COMPLETED exactly while the table holds at most `exactLimit` of them, else null.
 */
export async function readStatsByConsumer(
  db: SqlExecutor,
  byTenant: boolean,
  exactLimit: number = HISTORY_EXACT_LIMIT,
): Promise<InboxGroupStats[]> {
  const rows = await db.query<
    OpenCounts & { consumer: string; tenant: string; has_open: boolean; n: number | null }
  >(BY_CONSUMER, [null, byTenant, exactLimit + 1]);
  const open = rows.filter((row) => row.has_open);
  const completed = rows.filter((row) => row.n !== null);
  const exact = completed.reduce((n, row) => n + Number(row.n), 0) <= exactLimit;
  const groups = new Map<string, InboxGroupStats & { counts: Record<InboxStatus, number | null> }>();
  const group = (consumer: string, tenant: string) => {
    const key = JSON.stringify([consumer, tenant]);
    const found = groups.get(key);
    if (found) return found;
    const created = {
      consumer,
      tenant,
      counts: { ...zeroCounts(), COMPLETED: exact ? 0 : null },
      oldestUnfinishedAgeMs: null,
      expiredLeases: 0,
    };
    groups.set(key, created);
    return created;
  };
  for (const row of open) {
    const g = group(row.consumer, row.tenant);
    for (const status of UNFINISHED_STATUSES) g.counts[status] = Number(row[status]);
    groups.set(JSON.stringify([row.consumer, row.tenant]), {
      ...g,
      oldestUnfinishedAgeMs: row.age_ms === null ? null : Math.round(Number(row.age_ms)),
      expiredLeases: Number(row.expired),
    });
  }
  if (exact) for (const row of completed) group(row.consumer, row.tenant).counts.COMPLETED = Number(row.n);
  return [...groups.values()];
}
