import type { OutboxMessage } from '../../contracts';
import type { OutboxRecord, OutboxStatus } from '../record';
import type { InboxStatus } from '../../inbox/types';
import { jsonColumn as json } from '../../validate/storedJson';
import { notePayloadText } from '../foreignRows';

import { dateMs, dateOf, maybeDateOf, type DateMs } from '../../sql/dateColumn';

export { msSince } from '../../sql/msSince';

/**
 * The listing cursor's position of a timestamp: microseconds since 1970 as text, from its UTC
 * date and time of day (exact for every instant PostgreSQL stores: `extract(epoch)` of one past
 * what a bigint of microseconds holds, near 294276 AD, is rounded, and its bigint cast failed), or
 * 'infinity' / '-infinity' as such (the bigint cast failed every page holding such a row). CURSOR
 * (adminQueries.ts) reads both back.
 */
export function createdMicros(column: string): string {
  const utc = `(${column} AT TIME ZONE 'UTC')`;
  return `CASE WHEN isfinite(${column}) THEN (((${utc}::date - date '1970-01-01')::numeric * 86400000000)
      + round(extract(epoch FROM ${utc}::time) * 1000000))::text
    ELSE ${column}::text END`;
}

/** Every column a transition returns, qualified by alias `e`. */
export const RECORD_COLUMNS = `
  e.id::text AS id, e.seq::text AS seq, e.event_type, e.payload::text AS payload, e.destination,
  e.ordering_key, e.tenant_id, e.correlation_id, e.causation_id, e.headers::text AS headers,
  e.traceparent, e.tracestate, e.status,
  e.retry_count, e.max_retries, e.claim_count, ${dateMs('e.next_attempt_at')} AS next_attempt_at,
  e.claim_token::text AS claim_token, ${dateMs('e.lease_expires_at')} AS lease_expires_at, e.last_error,
  ${dateMs('e.published_at')} AS published_at, ${dateMs('e.failed_at')} AS failed_at,
  ${dateMs('e.skipped_at')} AS skipped_at, ${dateMs('e.created_at')} AS created_at,
  ${dateMs('e.updated_at')} AS updated_at, ${createdMicros('e.created_at')} AS created_us`;

/**
 * The columns a claim returns: what the publisher's message needs (toMessage) and the seq the
 * claim sorts by. Fewer than RECORD_COLUMNS: every claimed row crosses the wire and is parsed
 * by the driver, so status, lease and bookkeeping columns the relay never reads are left out.
 */
export const CLAIMED_COLUMNS = `
  e.id::text AS id, e.seq::text AS seq, e.event_type, e.payload::text AS payload, e.destination,
  e.ordering_key, e.tenant_id, e.correlation_id, e.causation_id, e.headers::text AS headers,
  e.traceparent, e.tracestate, e.retry_count, ${dateMs('e.created_at')} AS created_at`;

/**
 * A status as a sub-select (evaluated once) instead of a literal: equal to it, but not a constant
 * the planner can prove a partial index's predicate (`WHERE status = ...`) with. A statement that
 * knows its rows' ids compares status this way so that the primary key is its only way in; with
 * the literal, under statistics that take the status to be rare, the planner read every row of
 * the status off the partial index and matched the ids against them.
 */
export function opaqueStatus(status: OutboxStatus | InboxStatus): string {
  return `(SELECT '${status}'::text)`;
}

/**
 * The fence every change of a claimed row goes through: still PROCESSING, under the same
 * claim token, with an unexpired lease (database clock). `$token` is the parameter holding it.
 * `byId`: for a statement that names its rows by id (joined to its input): the status is opaque
 * (opaqueStatus), so the rows are looked up by primary key, one probe per input row. With
 * 'PROCESSING' literal, a completion read every claim's rows off the lease index, and under a
 * generic plan with statistics of an empty table it rescanned its whole input for each of them.
 */
export function claimFence(token: string, options: { byId?: boolean } = {}): string {
  const status = options.byId === true ? opaqueStatus('PROCESSING') : `'PROCESSING'`;
  return `e.status = ${status} AND e.claim_token = ${token}::uuid AND e.lease_expires_at > now()`;
}

/**
 * `column + 1`, saturating at PostgreSQL's largest integer: a counter without an upper bound
 * (claim_count, expired_claims) that SQL, an older version or an operator set to 2^31-1 would
 * make the set-based statement incrementing it fail for every row it touches ("integer out of
 * range"), so one row would stop the claim, the recovery or the release of all the others.
 */
export function saturatingIncrement(column: string): string {
  return `(least(${column}, 2147483646) + 1)`;
}

/**
 * retry_count after one more failed attempt, never beyond max_retries (the table's CHECK
 * retry_count <= max_retries) nor past integer range: a row put back to PENDING with its attempts
 * spent (the status reset by SQL, not the counters) completes FAILED alone, instead of failing the
 * batch's whole completion statement (test/review82-spentRowBatch.test.ts).
 */
export function nextRetryCount(row: string): string {
  return `(least(${row}.retry_count, ${row}.max_retries - 1) + 1)`;
}

/** A duration in ms as an interval: `${msInterval('$3')}`. */
export function msInterval(param: string): string {
  return `(${param}::bigint * interval '1 millisecond')`;
}

export interface OutboxRow {
  id: string;
  seq: string;
  event_type: string;
  payload: unknown;
  destination: string | null;
  ordering_key: string | null;
  tenant_id: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  headers: unknown;
  traceparent: string | null;
  tracestate: string | null;
  status: string;
  retry_count: number | bigint | string;
  max_retries: number | bigint | string;
  claim_count: number | bigint | string;
  /** The times, read with dateMs (sql/dateColumn.ts). */
  next_attempt_at: DateMs;
  claim_token: string | null;
  lease_expires_at: DateMs | null;
  last_error: string | null;
  published_at: DateMs | null;
  failed_at: DateMs | null;
  skipped_at: DateMs | null;
  created_at: DateMs;
  updated_at: DateMs;
  created_us: string;
}

/** A claimed row: the CLAIMED_COLUMNS. */
export type ClaimedRow = Pick<
  OutboxRow,
  | 'id'
  | 'seq'
  | 'event_type'
  | 'payload'
  | 'destination'
  | 'ordering_key'
  | 'tenant_id'
  | 'correlation_id'
  | 'causation_id'
  | 'headers'
  | 'traceparent'
  | 'tracestate'
  | 'retry_count'
  | 'created_at'
>;

/** Maps a row from either driver (Prisma: bigint / Date; pg: string / Date) to a record. */
export function toRecord(row: OutboxRow): OutboxRecord {
  return {
    id: row.id,
    type: row.event_type,
    payload: json(row.payload),
    status: row.status as OutboxStatus,
    destination: row.destination,
    orderingKey: row.ordering_key,
    tenantId: row.tenant_id,
    correlationId: row.correlation_id,
    causationId: row.causation_id,
    headers: json(row.headers),
    traceparent: row.traceparent,
    tracestate: row.tracestate,
    retryCount: Number(row.retry_count),
    maxRetries: Number(row.max_retries),
    claimCount: Number(row.claim_count),
    nextAttemptAt: dateOf(row.next_attempt_at),
    claimToken: row.claim_token ?? null,
    leaseExpiresAt: maybeDateOf(row.lease_expires_at),
    lastError: row.last_error,
    publishedAt: maybeDateOf(row.published_at),
    failedAt: maybeDateOf(row.failed_at),
    skippedAt: maybeDateOf(row.skipped_at),
    createdAt: dateOf(row.created_at),
    updatedAt: dateOf(row.updated_at),
  };
}

/** The message handed to a publisher for a claimed row. */
export function toMessage(row: ClaimedRow): OutboxMessage {
  return notePayloadText(messageOf(row), row.payload);
}

function messageOf(row: ClaimedRow): OutboxMessage {
  return {
    id: row.id,
    type: row.event_type,
    payload: json(row.payload),
    destination: row.destination,
    orderingKey: row.ordering_key,
    tenantId: row.tenant_id,
    correlationId: row.correlation_id,
    causationId: row.causation_id,
    headers: json(row.headers),
    traceparent: row.traceparent,
    tracestate: row.tracestate,
    attempt: Number(row.retry_count) + 1,
    createdAt: dateOf(row.created_at),
  };
}
