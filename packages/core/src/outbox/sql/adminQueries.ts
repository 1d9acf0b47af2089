import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus, RECORD_COLUMNS, type OutboxRow } from './fragments';

// Scope: $1 is the tenant, or NULL for the operator scope (every row).
const GET = `SELECT ${RECORD_COLUMNS} FROM outbox_events e
  WHERE e.id = $2::uuid AND ($1::text IS NULL OR e.tenant_id = $1::text)`;

// Newest first; the cursor ($3 microseconds since epoch, $4 seq) is exclusive, and seq
// breaks ties between identical created_at values, so pages never overlap or skip.
// The tenant ($1) and the cursor are written in only when given, one text per combination: as
// `($1 IS NULL OR e.tenant_id = $1)` and `($3 IS NULL OR (created_at, seq) < ...)`, a generic
// plan (a named statement's, from its sixth execution) could use neither as an index condition,
// so a tenant's page walked every other tenant's newer rows and a page after a cursor walked
// every row of the pages before it (test/outbox/maintenanceCost.test.ts).
const CURSOR = `(e.created_at, e.seq) <
  (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::bigint)`;
const list = (tenant: boolean, cursor: boolean) => `SELECT ${RECORD_COLUMNS} FROM outbox_events e
  WHERE ${tenant ? 'e.tenant_id = $1::text' : '$1::text IS NULL'}
    AND ($2::text IS NULL OR e.status = $2::text)
    AND ${cursor ? CURSOR : '$3::bigint IS NULL AND $4::bigint IS NULL'}
    AND ($6::text IS NULL OR e.event_type = $6::text)
    AND ($7::text IS NULL OR e.ordering_key = $7::text)
    AND ($8::timestamptz IS NULL OR e.created_at < $8::timestamptz)
  ORDER BY e.created_at DESC, e.seq DESC
  LIMIT $5`;
/** LIST[tenant ? 1 : 0][cursor ? 1 : 0]. */
const LIST = [
  [list(false, false), list(false, true)],
  [list(true, false), list(true, true)],
] as const;

// The counts of StatsRow, over the rows a query selects (one scope, or one tenant's group).
const STATS_COLUMNS = `
    count(*) FILTER (WHERE status = 'PENDING')::float8 AS pending,
    count(*) FILTER (WHERE status = 'PROCESSING')::float8 AS processing,
    count(*) FILTER (WHERE status = 'SENT')::float8 AS sent,
    count(*) FILTER (WHERE status = 'FAILED')::float8 AS failed,
    count(*) FILTER (WHERE status = 'PROCESSING' AND lease_expires_at <= now())::float8 AS expired_leases,
    (extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'PENDING')) * 1000)::bigint::text
      AS oldest_pending_ms`;

const STATS = `SELECT ${STATS_COLUMNS}
  FROM outbox_events WHERE ($1::text IS NULL OR tenant_id = $1::text)`;

// One row per tenant ('' for rows without one) when $1, else one row for the table; no rows
// when the table is empty.
const STATS_BY_TENANT = `SELECT CASE WHEN $1::boolean THEN coalesce(tenant_id, '') ELSE '' END AS tenant,
    ${STATS_COLUMNS}
  FROM outbox_events GROUP BY 1`;

// The DELETE re-checks SENT opaque (opaqueStatus), so it finds the doomed rows by primary key:
// with 'SENT' literal, under statistics that take SENT rows to be rare (analyzed before they were
// sent), the planner read the whole SENT history off its index and rescanned the doomed rows for
// each: a purge of 100 beside 10,000 old SENT rows cost 2,010,300 rows of work
// (test/outbox/maintenanceCost.test.ts).
const PURGE = `WITH doomed AS (
    SELECT id FROM outbox_events
    WHERE status = 'SENT' AND published_at < $2::timestamptz AND ($1::text IS NULL OR tenant_id = $1::text)
    ORDER BY published_at LIMIT $3
    FOR UPDATE SKIP LOCKED
  )
  DELETE FROM outbox_events e USING doomed WHERE e.id = doomed.id AND e.status = ${opaqueStatus('SENT')}`;

export interface StatsRow {
  pending: number;
  processing: number;
  sent: number;
  failed: number;
  expired_leases: number;
  oldest_pending_ms: string | null;
}

export async function getEvent(
  db: SqlExecutor,
  tenantId: string | null,
  id: string,
): Promise<OutboxRow | null> {
  const [row] = await db.query<OutboxRow>(GET, [tenantId, id]);
  return row ?? null;
}

export function listEvents(
  db: SqlExecutor,
  args: {
    tenantId: string | null;
    status: string | null;
    type: string | null;
    key: string | null;
    createdBefore: Date | null;
    after: { us: string; seq: string } | null;
    limit: number;
  },
): Promise<OutboxRow[]> {
  const text = LIST[args.tenantId === null ? 0 : 1][args.after === null ? 0 : 1];
  return db.query<OutboxRow>(text, [
    args.tenantId,
    args.status,
    args.after?.us ?? null,
    args.after?.seq ?? null,
    args.limit,
    args.type,
    args.key,
    args.createdBefore?.toISOString() ?? null,
  ]);
}

export async function eventStats(db: SqlExecutor, tenantId: string | null): Promise<StatsRow> {
  const [row] = await db.query<StatsRow>(STATS, [tenantId]);
  return row as StatsRow;
}

/** StatsRow per tenant (`byTenant`), or one row for every tenant together under tenant ''. */
export function eventStatsByTenant(
  db: SqlExecutor,
  byTenant: boolean,
): Promise<(StatsRow & { tenant: string })[]> {
  return db.query<StatsRow & { tenant: string }>(STATS_BY_TENANT, [byTenant]);
}

export function purgeSentEvents(
  db: SqlExecutor,
  args: { tenantId: string | null; before: Date; limit: number },
): Promise<number> {
  return db.execute(PURGE, [args.tenantId, args.before.toISOString(), args.limit]);
}
