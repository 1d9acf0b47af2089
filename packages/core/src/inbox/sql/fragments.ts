import { opaqueStatus } from '../../outbox/sql/fragments';
import { dateMs, dateOf, maybeDateOf, type DateMs } from '../../sql/dateColumn';
import { jsonColumn, noteInexactPayload } from '../../validate/storedJson';
import type { ClaimedReceipt, InboxRecord, InboxRequeueEntry, InboxStatus, ReceiptKey } from '../types';

/** ferry's inbox table. */
export const TABLE = 'ferry_inbox_receipts';

/** Every column a record is read with (initialize() requires them). */
export const REQUIRED_COLUMNS = [
  'id',
  'tenant_id',
  'consumer',
  'message_id',
  'message_type',
  'messaging_system',
  'payload',
  'payload_fingerprint',
  'headers',
  'status',
  'attempts',
  'lifetime_attempts',
  'max_attempts',
  'next_attempt_at',
  'claim_token',
  'lease_expires_at',
  'row_version',
  'last_error',
  'requeue_history',
  'replay_source_id',
  'replay_source_version',
  'replay_request_id',
  'replay_actor',
  'replay_reason',
  'replay_requested_at',
  'created_at',
  'updated_at',
  'completed_at',
  'dead_at',
  'payload_purged_at',
] as const;

/** The timestamp columns: read as dateMs (sql/dateColumn.ts), each under its own name. */
const TIME_COLUMNS: ReadonlySet<string> = new Set([
  'next_attempt_at',
  'lease_expires_at',
  'replay_requested_at',
  'created_at',
  'updated_at',
  'completed_at',
  'dead_at',
  'payload_purged_at',
]);

/** REQUIRED_COLUMNS as a select list, each qualified by `prefix` (`r.`), `payload` as `payload`. */
function selectList(prefix: string, payload: string): string {
  return REQUIRED_COLUMNS.map((column) => {
    if (column === 'payload') return payload;
    return TIME_COLUMNS.has(column) ? `${dateMs(`${prefix}${column}`)} AS ${column}` : `${prefix}${column}`;
  }).join(', ');
}

/** Every column of a record; every statement returning rows uses it. */
export const COLUMNS = selectList('', 'payload');

/** COLUMNS without the payload (NULL in its place): a listing that reads none. */
export const COLUMNS_WITHOUT_PAYLOAD = selectList('', 'NULL::jsonb AS payload');

/**
 * COLUMNS for a claim, qualified by alias `r`, the payload as text (toClaimed parses it): a
 * driver's own JSON.parse of the jsonb would change a number a row inserted by SQL holds exactly
 * (12345678901234567891 becomes 12345678901234567000) with no trace left to refuse it by.
 */
export const CLAIMED_COLUMNS = selectList('r.', 'r.payload::text AS payload');

/**
 * The fence every transition of a claimed row uses: $1 id, $2 claim token. The row must
 * still be PROCESSING under that token with an unexpired lease on the database clock.
 * clock_timestamp(), not now(): completion runs at the end of the handler transaction, and
 * now() is that transaction's start, before a lease that expired during the handler.
 *
 * The status is compared through opaqueStatus (the outbox's fragment): the primary key is then
 * the statement's only way to the row. With 'PROCESSING' literal, and statistics from before the
 * rows were claimed (PROCESSING taken for rare), the planner read the whole lease index, every
 * row every claim holds in flight, and matched the id against each (test/inbox/maintenanceCost).
 */
export const FENCE = `id = $1::uuid AND status = ${opaqueStatus('PROCESSING')} AND claim_token = $2::uuid AND lease_expires_at > clock_timestamp()`;

/**
 * A transaction-local setting that holds the claim token of the handler transaction's receipt:
 * set by its first statement (beginHandler), read by the completion. It vanishes when the
 * transaction ends, so a completion that finds it missing runs after a COMMIT or ROLLBACK the
 * handler issued on its own transaction, no longer inside ferry's one.
 */
export const HANDLER_CLAIM = `'ferry.inbox_claim'`;

/**
 * The advisory lock key of receipt `id` (an SQL expression of type uuid): its handler
 * transactions hold it shared from their first statement (beginHandler) to their end, and the
 * operator's forced release (releaseStuck) takes it exclusively, so it tells a live handler from
 * a dead worker's claim. One bigint key space with the outbox's ordering keys ('ferry_outbox:'),
 * told apart by the prefix.
 */
export function receiptLock(id: string): string {
  return `hashtextextended('ferry_inbox_receipt:' || (${id})::text, 0)`;
}

/**
 * FENCE for many claims in one UPDATE of TABLE aliased `r`: $1 ids and $2 their claim tokens,
 * pairwise (see claimArrays). The statement reads
 *   WITH ${BATCH_OWNED} UPDATE ${TABLE} AS r SET ... WHERE ${BATCH_FENCE}
 * BATCH_OWNED locks the rows each (id, token) pair still owns, one primary-key probe per pair:
 * the locking sub-select cannot be flattened into a join, so the planner has no other way in.
 * BATCH_FENCE then updates them by primary key (`= ANY`, no join) and re-checks status and
 * lease; the token cannot have changed, the row being locked since it was matched. As a join of
 * the pairs to the table, the statement read every claim's rows off the lease index (status
 * literal) or hash-joined the pairs against a sequential scan of the whole table, and a generic
 * plan rescanned the pairs for each row in flight: 100 renewals beside 7,000 rows of other
 * claims cost 1,407,120 rows of work (test/inbox/maintenanceCost.test.ts).
 */
export const BATCH_OWNED = batchOwned('TRUE');

/** BATCH_OWNED whose rows also meet `condition` before they are locked (renewalLockBound). */
export function batchOwned(condition: string): string {
  return batchClaims(`f.lease_expires_at > clock_timestamp() AND ${condition}`);
}

/** The `owned` CTE: each ($1 id, $2 token) pair's row, PROCESSING under that token and meeting `condition`, locked. */
function batchClaims(condition: string): string {
  return `
  owned AS (
    SELECT o.id FROM unnest($1::uuid[], $2::uuid[]) AS q(id, token)
    CROSS JOIN LATERAL (
      SELECT f.id FROM ${TABLE} AS f
      WHERE f.id = q.id AND f.claim_token = q.token AND f.status = ${opaqueStatus('PROCESSING')}
        AND ${condition}
      FOR NO KEY UPDATE
    ) AS o
  )`;
}

/**
 * BATCH_OWNED without the lease: the rows each (id, token) pair still holds, PROCESSING under that
 * claim token, whether or not its lease has run out on the database clock (nobody claimed them
 * since: a new claim writes a new token), locked as BATCH_OWNED locks them. For a give-back of
 * claims whose handler never ran (releaseClaims), never for a completion or a renewal.
 */
export const BATCH_HELD = batchClaims('TRUE');

/** BATCH_FENCE without the lease, for BATCH_HELD. */
export const BATCH_HELD_FENCE = `r.id = ANY (ARRAY(SELECT id FROM owned)) AND r.status = ${opaqueStatus('PROCESSING')}`;

export const BATCH_FENCE = `
  r.id = ANY (ARRAY(SELECT id FROM owned)) AND r.status = ${opaqueStatus('PROCESSING')}
    AND r.lease_expires_at > clock_timestamp()`;

/** The $1 ids and $2 claim tokens BATCH_FENCE reads. */
export function claimArrays(
  claims: ReadonlyArray<{ readonly id: string; readonly claimToken: string }>,
): [string[], string[]] {
  return [claims.map((c) => c.id), claims.map((c) => c.claimToken)];
}

/** The scope key stored (generated) for a tenant id; matches the table's generated column. */
export function scopeOf(tenantId: string | null): string {
  return tenantId === null ? 'global' : `tenant:${tenantId}`;
}

export interface ReceiptRow {
  id: string;
  tenant_id: string | null;
  consumer: string;
  message_id: string;
  message_type: string | null;
  messaging_system: string | null;
  payload: Record<string, unknown> | null;
  payload_fingerprint: string;
  headers: Record<string, string> | null;
  status: InboxStatus;
  attempts: number;
  lifetime_attempts: number;
  max_attempts: number;
  /** The times, read with dateMs (sql/dateColumn.ts). */
  next_attempt_at: DateMs;
  claim_token: string | null;
  lease_expires_at: DateMs | null;
  row_version: number;
  last_error: string | null;
  requeue_history: InboxRequeueEntry[] | null;
  replay_source_id: string | null;
  replay_source_version: number | null;
  replay_request_id: string | null;
  replay_actor: string | null;
  replay_reason: string | null;
  replay_requested_at: DateMs | null;
  created_at: DateMs;
  updated_at: DateMs;
  completed_at: DateMs | null;
  dead_at: DateMs | null;
  payload_purged_at: DateMs | null;
}

/**
 * The kept requeue history (requeueDead keeps the last INBOX_REQUEUE_HISTORY_LIMIT entries), each
 * entry numbered, and how many older ones were dropped: counted from the last numbered entry (an
 * entry stored before entries were numbered has none; it is numbered here by its place).
 */
function requeueHistory(
  stored: readonly InboxRequeueEntry[] | null,
): Pick<InboxRecord, 'requeueHistory' | 'requeueHistoryDropped'> {
  const entries = Array.isArray(stored) ? stored : [];
  let dropped = 0;
  for (let index = entries.length - 1; index >= 0; index -= 1) {
    const sequence: unknown = (entries[index] as { sequence?: unknown } | null)?.sequence;
    if (typeof sequence === 'number' && Number.isSafeInteger(sequence) && sequence >= 1) {
      dropped = Math.max(0, sequence - (index + 1));
      break;
    }
  }
  return {
    requeueHistory: entries.map((entry, index) => ({ ...entry, sequence: dropped + index + 1 })),
    requeueHistoryDropped: dropped,
  };
}

export function toRecord(row: ReceiptRow): InboxRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    consumer: row.consumer,
    messageId: row.message_id,
    messageType: row.message_type,
    system: row.messaging_system,
    payload: row.payload,
    payloadFingerprint: row.payload_fingerprint,
    headers: row.headers ?? {},
    status: row.status,
    attempts: Number(row.attempts),
    lifetimeAttempts: Number(row.lifetime_attempts),
    maxAttempts: Number(row.max_attempts),
    nextAttemptAt: dateOf(row.next_attempt_at),
    claimToken: row.claim_token,
    leaseExpiresAt: maybeDateOf(row.lease_expires_at),
    rowVersion: Number(row.row_version),
    lastError: row.last_error,
    ...requeueHistory(row.requeue_history),
    replay:
      row.replay_source_id === null
        ? null
        : {
            sourceId: row.replay_source_id,
            sourceVersion: Number(row.replay_source_version),
            requestId: row.replay_request_id ?? '',
            actor: row.replay_actor ?? '',
            reason: row.replay_reason ?? '',
            requestedAt: dateOf(row.replay_requested_at ?? row.created_at),
          },
    createdAt: dateOf(row.created_at),
    updatedAt: dateOf(row.updated_at),
    completedAt: maybeDateOf(row.completed_at),
    deadAt: maybeDateOf(row.dead_at),
    payloadPurgedAt: maybeDateOf(row.payload_purged_at),
  };
}

/** The columns of a ReceiptKey: what acceptMany reads back, no payload or headers. */
export const KEY_COLUMNS = 'id, tenant_id, consumer, message_id, payload_fingerprint';

export type ReceiptKeyRow = Pick<
  ReceiptRow,
  'id' | 'tenant_id' | 'consumer' | 'message_id' | 'payload_fingerprint'
>;

export function toReceiptKey(row: ReceiptKeyRow): ReceiptKey {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    consumer: row.consumer,
    messageId: row.message_id,
    payloadFingerprint: row.payload_fingerprint,
  };
}

/** How a statement reads receipts back: the columns it returns and the row mapper. */
export interface ReceiptShape<R extends ReceiptKey> {
  readonly columns: string;
  readonly read: (row: ReceiptRow) => R;
}

/** Whole receipts (accept, acceptDetailed). */
export const FULL_RECEIPTS: ReceiptShape<InboxRecord> = { columns: COLUMNS, read: toRecord };

/** Identity, id and fingerprint only (acceptMany: its results carry ids). */
export const RECEIPT_KEYS: ReceiptShape<ReceiptKey> = { columns: KEY_COLUMNS, read: toReceiptKey };

/** A row of CLAIMED_COLUMNS: the payload is its text. */
export type ClaimedRow = Omit<ReceiptRow, 'payload'> & { payload: string | null };

/** A claimed receipt, noting a number in its payload text that JSON.parse changed (storedPayload refuses it). */
export function toClaimed(row: ClaimedRow): ClaimedReceipt {
  const record = toRecord({ ...row, payload: jsonColumn<ReceiptRow['payload']>(row.payload) });
  return noteInexactPayload({ ...record, claimToken: row.claim_token ?? '' }, row.payload);
}

export { isUuid } from '../../uuid';
