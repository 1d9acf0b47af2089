import type { ClaimedReceipt, InboxRecord, InboxRequeueEntry, InboxStatus } from '../types';

/** ferry's inbox table. */
export const TABLE = 'ferry_inbox_receipts';

/** Every column a record is read with; every statement returning rows uses it. */
export const COLUMNS = `
  id, tenant_id, consumer, message_id, message_type, payload, payload_fingerprint, headers,
  status, attempts, lifetime_attempts, max_attempts, next_attempt_at, claim_token,
  lease_expires_at, row_version, last_error, requeue_history, replay_source_id,
  replay_source_version, replay_request_id, replay_actor, replay_reason, replay_requested_at,
  created_at, updated_at, completed_at, dead_at, payload_purged_at`;

/** Columns initialize() requires. */
export const REQUIRED_COLUMNS = COLUMNS.split(',').map((column) => column.trim());

/**
 * The fence every transition of a claimed row uses: $1 id, $2 claim token. The row must
 * still be PROCESSING under that token with an unexpired lease (database clock).
 */
export const FENCE = `id = $1::uuid AND status = 'PROCESSING' AND claim_token = $2::uuid AND lease_expires_at > now()`;

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
  payload: Record<string, unknown> | null;
  payload_fingerprint: string;
  headers: Record<string, string> | null;
  status: InboxStatus;
  attempts: number;
  lifetime_attempts: number;
  max_attempts: number;
  next_attempt_at: Date;
  claim_token: string | null;
  lease_expires_at: Date | null;
  row_version: number;
  last_error: string | null;
  requeue_history: InboxRequeueEntry[] | null;
  replay_source_id: string | null;
  replay_source_version: number | null;
  replay_request_id: string | null;
  replay_actor: string | null;
  replay_reason: string | null;
  replay_requested_at: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  dead_at: Date | null;
  payload_purged_at: Date | null;
}

function date(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

function maybeDate(value: Date | string | null): Date | null {
  return value === null ? null : date(value);
}

export function toRecord(row: ReceiptRow): InboxRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    consumer: row.consumer,
    messageId: row.message_id,
    messageType: row.message_type,
    payload: row.payload,
    payloadFingerprint: row.payload_fingerprint,
    headers: row.headers ?? {},
    status: row.status,
    attempts: Number(row.attempts),
    lifetimeAttempts: Number(row.lifetime_attempts),
    maxAttempts: Number(row.max_attempts),
    nextAttemptAt: date(row.next_attempt_at),
    leaseExpiresAt: maybeDate(row.lease_expires_at),
    rowVersion: Number(row.row_version),
    lastError: row.last_error,
    requeueHistory: row.requeue_history ?? [],
    replay:
      row.replay_source_id === null
        ? null
        : {
            sourceId: row.replay_source_id,
            sourceVersion: Number(row.replay_source_version),
            requestId: row.replay_request_id ?? '',
            actor: row.replay_actor ?? '',
            reason: row.replay_reason ?? '',
            requestedAt: date(row.replay_requested_at ?? row.created_at),
          },
    createdAt: date(row.created_at),
    updatedAt: date(row.updated_at),
    completedAt: maybeDate(row.completed_at),
    deadAt: maybeDate(row.dead_at),
    payloadPurgedAt: maybeDate(row.payload_purged_at),
  };
}

export function toClaimed(row: ReceiptRow): ClaimedReceipt {
  return { ...toRecord(row), claimToken: row.claim_token ?? '' };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
