import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus, RECORD_COLUMNS, type OutboxRow } from './fragments';

// Scope: $1 is the tenant, or NULL for the operator scope (every row).
const GET = `SELECT ${RECORD_COLUMNS} FROM outbox_events e
  WHERE e.id = $2::uuid AND ($1::text IS NULL OR e.tenant_id = $1::text)`;

// Newest first; the cursor ($3 microseconds since epoch, or ±infinity, $4 seq) is exclusive, and seq
// breaks ties between identical created_at values, so pages never overlap or skip.
// The tenant ($1) and the cursor are written in only when given, one text per combination: as
// `($1 IS NULL OR e.tenant_id = $1)` and `($3 IS NULL OR (created_at, seq) < ...)`, a generic
// plan (a named statement's, from its sixth execution) could use neither as an index condition,
// so a tenant's page walked every other tenant's newer rows and a page after a cursor walked
// every row of the pages before it (test/outbox/maintenanceCost.test.ts).
// $3 is text: a row's created_at SQL set to 'infinity' or '-infinity' ends a page as such, and
// any other as its microseconds (createdMicros), every instant PostgreSQL stores included: whole
// days, then microseconds, added to the epoch as a timestamp without time zone (exact, no DST),
// read as UTC (a bigint of microseconds times an interval overflowed near 294276 AD).
const CURSOR = `(e.created_at, e.seq) <
  (CASE WHEN $3::text IN ('infinity', '-infinity') THEN $3::text::timestamptz
     ELSE (timestamp 'epoch' + div($3::text::numeric, 86400000000)::int * interval '1 day'
       + mod($3::text::numeric, 86400000000)::bigint * interval '1 microsecond') AT TIME ZONE 'UTC' END,
   $4::bigint)`;
// Without the payload (list's `payload: false`): null in its place, so the row reads as a record.
const SUMMARY_COLUMNS = RECORD_COLUMNS.replace('e.payload::text AS payload', 'NULL::text AS payload');
const list = (tenant: boolean, cursor: boolean, payload: boolean) => `SELECT ${
  payload ? RECORD_COLUMNS : SUMMARY_COLUMNS
} FROM outbox_events e
  WHERE ${tenant ? 'e.tenant_id = $1::text' : '$1::text IS NULL'}
    AND ($2::text IS NULL OR e.status = $2::text)
    AND ${cursor ? CURSOR : '$3::text IS NULL AND $4::bigint IS NULL'}
    AND ($6::text IS NULL OR e.event_type = $6::text)
    AND ($7::text IS NULL OR e.ordering_key = $7::text)
    AND ($8::timestamptz IS NULL OR e.created_at < $8::timestamptz)
  ORDER BY e.created_at DESC, e.seq DESC
  LIMIT $5`;
/** LIST[payload ? 1 : 0][tenant ? 1 : 0][cursor ? 1 : 0]. */
const LIST = [false, true].map((payload) => [
  [list(false, false, payload), list(false, true, payload)],
  [list(true, false, payload), list(true, true, payload)],
]);

// The DELETE finds the doomed rows by primary key (`id = ANY (ARRAY(...))`, an InitPlan) and
// re-checks SENT opaque (opaqueStatus): joined to them under statistics that know SENT rows are
// most of the table, it hashed them against every SENT row (test/outbox/statsCost.test.ts); with
// 'SENT' literal, under statistics that take SENT rows to be rare (analyzed before they were
// sent), the planner read the whole SENT history off its index and rescanned the doomed rows for
// each: a purge of 100 beside 10,000 old SENT rows cost 2,010,300 rows of work
// (test/outbox/maintenanceCost.test.ts).
//
// A tenant's purge reads the tenant's own rows through its listing index
// (outbox_events_tenant_created_idx), oldest first: outbox_events_sent_idx holds every tenant's
// SENT rows by publish time, and read with the tenant as a filter it took every other tenant's
// older SENT rows first (test/outbox/statsCost.test.ts). A row is created before it is published
// (both on the database clock), so `created_at < before` bounds the read to rows old enough; what
// it reads besides its doomed rows is the tenant's own older unfinished rows. SENT is opaque there,
// so that the planner cannot AND the tenant's entries with every SENT entry of
// outbox_events_sent_idx (a bitmap reads all of them, LIMIT or not). No SENT index
// leading with the tenant: the relay's every completion would write an entry into it.
const purge = (tenant: boolean) => `WITH doomed AS (
    SELECT id FROM outbox_events
    WHERE status = ${tenant ? opaqueStatus('SENT') : `'SENT'`} AND published_at < $2::timestamptz AND ${
      tenant
        ? `tenant_id = $1::text AND created_at < $2::timestamptz
    ORDER BY tenant_id, created_at, seq`
        : `$1::text IS NULL
    ORDER BY published_at`
    } LIMIT $3
    FOR UPDATE SKIP LOCKED
  )
  DELETE FROM outbox_events e
  WHERE e.id = ANY (ARRAY(SELECT id FROM doomed)) AND e.status = ${opaqueStatus('SENT')}`;
const PURGE = purge(false);
const TENANT_PURGE = purge(true);

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
    /** false: the payload column is not read (null); default true. */
    payload?: boolean;
  },
): Promise<OutboxRow[]> {
  const text =
    LIST[args.payload === false ? 0 : 1]![args.tenantId === null ? 0 : 1]![args.after === null ? 0 : 1]!;
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

export function purgeSentEvents(
  db: SqlExecutor,
  args: { tenantId: string | null; before: Date; limit: number },
): Promise<number> {
  return db.execute(args.tenantId === null ? PURGE : TENANT_PURGE, [
    args.tenantId,
    args.before.toISOString(),
    args.limit,
  ]);
}
