import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus } from './fragments';
import { countUpTo, estimateHistory, HISTORY_EXACT_LIMIT } from '../../sql/historyCount';

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
    (extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'PENDING')) * 1000)::bigint::text
      AS oldest_pending_ms`;

const STATS = `SELECT ${COUNTS} FROM (${UNFINISHED}) u`;

// One row per tenant ('' for rows without one) when $2, else one row for the table.
const STATS_BY_TENANT = `SELECT CASE WHEN $2::boolean THEN coalesce(tenant_id, '') ELSE '' END AS tenant,
    ${COUNTS}
  FROM (${UNFINISHED}) u GROUP BY 1`;

// A tenant's SENT rows through its listing index (outbox_events_tenant_created_idx), which holds
// only that tenant's rows; SENT opaque (opaqueStatus), so that the planner cannot AND it with
// outbox_events_sent_idx, a bitmap that reads every tenant's SENT entries. The operator's through
// outbox_events_sent_idx.
const TENANT_SENT = `SELECT 1 FROM outbox_events WHERE tenant_id = $1::text AND status = ${opaqueStatus('SENT')}
  ORDER BY tenant_id, created_at DESC, seq DESC`;
const SENT = `SELECT tenant_id FROM outbox_events WHERE status = 'SENT'`;
// SENT rows by tenant, reading at most $2 of them (the caller asks for the limit + 1).
const SENT_BY_TENANT = `SELECT CASE WHEN $1::boolean THEN coalesce(tenant_id, '') ELSE '' END AS tenant,
    count(*)::float8 AS sent
  FROM (${SENT} LIMIT $2::bigint) s GROUP BY 1`;

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
  const [row = EMPTY] = await db.query<UnfinishedRow>(STATS, [tenantId]);
  const sent =
    tenantId === null
      ? await countUpTo(db, SENT, [], exactLimit)
      : await countUpTo(db, TENANT_SENT, [tenantId], exactLimit);
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
  const unfinished = await db.query<UnfinishedRow & { tenant: string }>(STATS_BY_TENANT, [null, byTenant]);
  const sentRows = await db.query<{ tenant: string; sent: number }>(SENT_BY_TENANT, [
    byTenant,
    exactLimit + 1,
  ]);
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
