import type { SqlExecutor } from '../../sql/executor';
import { msSince, opaqueStatus } from './fragments';
import { estimateHistory, exactUpTo, historyCount, HISTORY_EXACT_LIMIT } from '../../sql/historyCount';

/**
 * The unfinished rows, one arm per status so that each reads its own partial index (PENDING:
 * outbox_events_due_idx, PROCESSING: outbox_events_lease_idx, FAILED: outbox_events_failed_idx)
 * and none reads the SENT history; $1 the tenant, or NULL for every row.
 */
const UNFINISHED = ['PENDING', 'PROCESSING', 'FAILED']
  .map(
    (status) => `SELECT tenant_id, status, lease_expires_at, created_at FROM outbox_events
    WHERE status = '${status}' AND ($1::text IS NULL OR tenant_id = $1::text)`,
  )
  .join('\n  UNION ALL ');

const COUNTS = `
    count(*) FILTER (WHERE status = 'PENDING')::float8 AS pending,
    count(*) FILTER (WHERE status = 'PROCESSING')::float8 AS processing,
    count(*) FILTER (WHERE status = 'FAILED')::float8 AS failed,
    count(*) FILTER (WHERE status = 'PROCESSING' AND lease_expires_at <= now())::float8 AS expired_leases,
    round(${msSince(`min(created_at) FILTER (WHERE status = 'PENDING')`)})::text AS oldest_pending_ms`;

// A tenant's SENT rows through its listing index (outbox_events_tenant_created_idx), which holds
// only that tenant's rows; SENT opaque (opaqueStatus), so that the planner cannot AND it with
// outbox_events_sent_idx, a bitmap that reads every tenant's SENT entries. The operator's through
// outbox_events_sent_idx.
const TENANT_SENT = `SELECT 1 FROM outbox_events WHERE tenant_id = $1::text AND status = ${opaqueStatus('SENT')}
  ORDER BY tenant_id, created_at DESC, seq DESC`;
const SENT = `SELECT tenant_id FROM outbox_events WHERE status = 'SENT'`;

// The unfinished counts and the SENT rows (reading at most $2) in one statement, one snapshot: a
// row sent between two statements was counted twice. [every tenant, one tenant ($1)].
const STATS = [
  `SELECT ${COUNTS}, ${historyCount(SENT, '$2')} AS sent FROM (${UNFINISHED}) u`,
  `SELECT ${COUNTS}, ${historyCount(TENANT_SENT, '$2')} AS sent FROM (${UNFINISHED}) u`,
];

// Per group (a tenant, '' for rows without one, when $2; else one group for the table): the
// unfinished counts (`has_unfinished` when it has any) and its SENT rows, reading at most $3 of
// them (the caller asks for the limit + 1), in one statement.
const GROUP = `CASE WHEN $2::boolean THEN coalesce(tenant_id, '') ELSE '' END AS tenant`;
const STATS_BY_TENANT = `WITH unfinished AS (
    SELECT ${GROUP}, ${COUNTS} FROM (${UNFINISHED}) u GROUP BY 1
  ), sent AS (
    SELECT ${GROUP}, count(*)::float8 AS sent FROM (${SENT} LIMIT $3::bigint) s GROUP BY 1
  )
  SELECT coalesce(u.tenant, s.tenant) AS tenant, u.tenant IS NOT NULL AS has_unfinished,
    u.pending, u.processing, u.failed, u.expired_leases, u.oldest_pending_ms, s.sent
  FROM unfinished u FULL JOIN sent s ON s.tenant = u.tenant`;

interface UnfinishedRow {
  pending: number;
  processing: number;
  failed: number;
  expired_leases: number;
  oldest_pending_ms: string | null;
}

export interface StatsRow extends UnfinishedRow {
  sent: number;
  /** `sent` is PostgreSQL's estimate: there were more SENT rows than the exact limit. */
  sent_estimated: boolean;
}

/** A tenant's group of the metrics read; `sent` null when not counted (see eventStatsByTenant). */
export interface TenantStatsRow extends UnfinishedRow {
  tenant: string;
  sent: number | null;
  sent_estimated: boolean;
}

const EMPTY: UnfinishedRow = {
  pending: 0,
  processing: 0,
  failed: 0,
  expired_leases: 0,
  oldest_pending_ms: null,
};

const unfinishedCount = (row: UnfinishedRow) =>
  Number(row.pending) + Number(row.processing) + Number(row.failed);

/**
 * Exact counts of the unfinished statuses of one tenant (or of every row, `tenantId` null), and
 * the SENT rows: exact up to `exactLimit`, beyond it estimated (`sent_estimated`).
 */
export async function eventStats(
  db: SqlExecutor,
  tenantId: string | null,
  exactLimit: number = HISTORY_EXACT_LIMIT,
): Promise<StatsRow> {
  const [counted] = await db.query<UnfinishedRow & { sent: number }>(STATS[tenantId === null ? 0 : 1]!, [
    tenantId,
    exactLimit + 1,
  ]);
  const { sent: history, ...unfinished } = counted ?? { ...EMPTY, sent: 0 };
  const row: UnfinishedRow = unfinished;
  const sent = exactUpTo(history, exactLimit);
  if (sent !== null) return { ...row, sent, sent_estimated: false };
  const estimate = await estimateHistory(db, {
    table: 'outbox_events',
    scope: tenantId === null ? null : { column: 'tenant_id', value: tenantId },
    unfinished: unfinishedCount(row),
    limit: exactLimit,
  });
  return { ...row, sent: estimate, sent_estimated: true };
}

/**
 * The metrics read: a row per tenant (`byTenant`), or one row for every tenant together under
 * tenant ''. The unfinished statuses exactly; SENT rows exactly while the table holds at most
 * `exactLimit` of them; beyond it one row's SENT is estimated, and tenants' SENT are not counted
 * (null): no estimate per tenant is worth a gauge. No rows when the table is empty.
 */
export async function eventStatsByTenant(
  db: SqlExecutor,
  byTenant: boolean,
  exactLimit: number = HISTORY_EXACT_LIMIT,
): Promise<TenantStatsRow[]> {
  const counted = await db.query<
    UnfinishedRow & { tenant: string; has_unfinished: boolean; sent: number | null }
  >(STATS_BY_TENANT, [null, byTenant, exactLimit + 1]);
  const unfinished = counted
    .filter((row) => row.has_unfinished)
    .map(({ has_unfinished: _, sent: __, ...row }) => row);
  const sentRows = counted.flatMap(({ tenant, sent }) => (sent === null ? [] : [{ tenant, sent }]));
  const exact = sentRows.reduce((n, row) => n + Number(row.sent), 0) <= exactLimit;
  const rows = new Map<string, TenantStatsRow>();
  for (const row of unfinished)
    rows.set(row.tenant, { ...row, sent: exact ? 0 : null, sent_estimated: false });
  if (exact) {
    for (const { tenant, sent } of sentRows) {
      rows.set(tenant, {
        ...(rows.get(tenant) ?? { ...EMPTY, tenant }),
        sent: Number(sent),
        sent_estimated: false,
      });
    }
  } else if (!byTenant) {
    const row = rows.get('') ?? { ...EMPTY, tenant: '' };
    const sent = await estimateHistory(db, {
      table: 'outbox_events',
      scope: null,
      unfinished: unfinishedCount(row),
      limit: exactLimit,
    });
    rows.set('', { ...row, sent, sent_estimated: true });
  }
  return [...rows.values()];
}
