import type { SqlExecutor } from '../../sql/executor';
import type { FailedHeadPolicy } from '../options';
import { msInterval, RECORD_COLUMNS, type OutboxRow } from './fragments';

/**
 * Claims up to $1 due PENDING rows under one token ($2) and lease ($3 ms), skipping rows
 * other relays hold. A keyed row is claimable only when no earlier row of its key is in a
 * blocking status ($4: PENDING and PROCESSING, plus FAILED under the 'block' policy), so
 * a key has at most one row in flight and publishes in seq order. When $5 is true, FAILED
 * heads that a claimed row overtook are stamped skipped_at.
 */
const CLAIM = `
  WITH candidates AS (
    SELECT c.id FROM outbox_events c
    WHERE c.status = 'PENDING' AND c.next_attempt_at <= now()
      AND (c.ordering_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM outbox_events p
        WHERE p.ordering_key = c.ordering_key AND p.seq < c.seq AND p.status = ANY($4::text[])))
    ORDER BY c.next_attempt_at, c.seq
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE outbox_events e
    SET status = 'PROCESSING', claim_token = $2::uuid, lease_expires_at = now() + ${msInterval('$3')},
        claimed_at = now(), claim_count = e.claim_count + 1, updated_at = now()
    FROM candidates WHERE e.id = candidates.id
    RETURNING ${RECORD_COLUMNS}
  ), skipped AS (
    UPDATE outbox_events f SET skipped_at = now(), updated_at = now()
    FROM claimed
    WHERE $5::boolean AND f.status = 'FAILED' AND f.skipped_at IS NULL
      AND f.ordering_key = claimed.ordering_key AND f.seq < claimed.seq::bigint
    RETURNING f.id::text AS id
  )
  SELECT claimed.*, (SELECT array_agg(id) FROM skipped) AS skipped_ids
  FROM claimed ORDER BY claimed.seq::bigint`;

export interface ClaimResult {
  readonly rows: OutboxRow[];
  /** FAILED heads recorded as skipped by this claim (policy 'skip'). */
  readonly skippedIds: string[];
}

export async function claimBatch(
  db: SqlExecutor,
  args: { token: string; limit: number; leaseMs: number; failedHead: FailedHeadPolicy },
): Promise<ClaimResult> {
  const blocking =
    args.failedHead === 'block' ? ['PENDING', 'PROCESSING', 'FAILED'] : ['PENDING', 'PROCESSING'];
  const rows = await db.query<OutboxRow & { skipped_ids: string[] | null }>(CLAIM, [
    args.limit,
    args.token,
    args.leaseMs,
    blocking,
    args.failedHead === 'skip',
  ]);
  const skipped = new Set<string>();
  for (const row of rows) for (const id of row.skipped_ids ?? []) skipped.add(id);
  return { rows, skippedIds: [...skipped] };
}
