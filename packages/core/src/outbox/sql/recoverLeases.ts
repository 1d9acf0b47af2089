import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus, saturatingIncrement } from './fragments';

/** This expiry's count (saturating: a count SQL left at 2^31-1 must not fail the whole recovery). */
const EXPIRIES = saturatingIncrement('e.expired_claims');

/**
 * Requeues at most $1 rows whose lease expired, without touching retry_count (a lost
 * lease is not a failed attempt), and counts the expiry in expired_claims. A row whose
 * lease has now expired $2 times in a row (no completion in between) is a suspected
 * poison message (it keeps killing its relay) and becomes FAILED instead.
 *
 * The UPDATE re-checks the lease with the status opaque (opaqueStatus), so it finds the selected
 * rows by primary key. With 'PROCESSING' literal, under statistics that take PROCESSING rows to be
 * rare (analyzed before the claims), the planner read every expired row off the lease index and
 * rescanned the selected rows for each: 100 recovered among 2,000 expired leases cost 402,400
 * rows of work (test/outbox/maintenanceCost.test.ts), on every relay, every tenth cycle.
 */
const RECOVER = `
  WITH expired AS (
    SELECT id FROM outbox_events
    WHERE status = 'PROCESSING' AND lease_expires_at <= now()
    ORDER BY lease_expires_at LIMIT $1
    FOR UPDATE SKIP LOCKED
  )
  UPDATE outbox_events e SET
    status = CASE WHEN ${EXPIRIES} >= $2::int THEN 'FAILED' ELSE 'PENDING' END,
    last_error = CASE WHEN ${EXPIRIES} >= $2::int
      THEN 'poison guard: the lease expired ' || ${EXPIRIES}
        || ' times in a row without a completion (limit ' || $2::int || ')'
      ELSE e.last_error END,
    failed_at = CASE WHEN ${EXPIRIES} >= $2::int THEN now() END,
    expired_claims = ${EXPIRIES},
    claim_token = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = now()
  FROM expired WHERE e.id = expired.id
    AND e.status = ${opaqueStatus('PROCESSING')} AND e.lease_expires_at <= now()
  RETURNING e.id::text AS id, e.status, e.event_type, e.retry_count, e.last_error`;

export interface PoisonedRow {
  readonly id: string;
  readonly type: string;
  readonly retryCount: number;
  readonly error: string;
}

export interface RecoveryResult {
  readonly requeued: number;
  readonly poisoned: PoisonedRow[];
}

export async function recoverLeases(
  db: SqlExecutor,
  args: { limit: number; maxClaims: number },
): Promise<RecoveryResult> {
  const rows = await db.query<{
    id: string;
    status: string;
    event_type: string;
    retry_count: number | bigint;
    last_error: string;
  }>(RECOVER, [args.limit, args.maxClaims]);
  const poisoned = rows
    .filter((r) => r.status === 'FAILED')
    .map((r) => ({ id: r.id, type: r.event_type, retryCount: Number(r.retry_count), error: r.last_error }));
  return { requeued: rows.length - poisoned.length, poisoned };
}
