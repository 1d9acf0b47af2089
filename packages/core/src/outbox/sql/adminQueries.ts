import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus, RECORD_COLUMNS, type OutboxRow } from './fragments';

// Scope: $1 is the tenant, or NULL for the operator scope (every row).
const GET = `SELECT ${RECORD_COLUMNS} FROM outbox_events e
  WHERE e.id = $2::uuid AND ($1::text IS NULL OR e.tenant_id = $1::text)`;

// Newest first; the cursor ($3 microseconds since epoch, $4 seq) is exclusive, and seq
// breaks ties between identical created_at values, so pages never overlap or skip.
// `scope` selects the rows of $1: a tenant's list names its tenant outright, so the tenant index
// answers it under any plan. With `($1 IS NULL OR e.tenant_id = $1)` a generic plan (a named
// statement's, from its sixth execution) could not use that index: it walked every tenant's rows
// newer than the page (test/outbox/maintenanceCost.test.ts).
const list = (scope: string) => `SELECT ${RECORD_COLUMNS} FROM outbox_events e
  WHERE ${scope}
    AND ($2::text IS NULL OR e.status = $2::text)
    AND ($3::bigint IS NULL OR (e.created_at, e.seq) <
         (timestamptz 'epoch' + $3::bigint * interval '1 microsecond', $4::bigint))
    AND ($6::text IS NULL OR e.event_type = $6::text)
    AND ($7::text IS NULL OR e.ordering_key = $7::text)
    AND ($8::timestamptz IS NULL OR e.created_at < $8::timestamptz)
  ORDER BY e.created_at DESC, e.seq DESC
  LIMIT $5`;
const LIST_TENANT = list('e.tenant_id = $1::text');
const LIST_ALL = list('$1::text IS NULL');

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
  return db.query<OutboxRow>(args.tenantId === null ? LIST_ALL : LIST_TENANT, [
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
