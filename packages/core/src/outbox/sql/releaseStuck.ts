import type { SqlExecutor } from '../../sql/executor';

/**
 * Operator release: PROCESSING rows whose lease expired (or, with $3 force, every row of the
 * claim token $2, for a process known to be dead) go back to PENDING, due now. retry_count is
 * untouched (a dead process is not a failed attempt); like lease recovery, the release counts
 * as a lease expiry for the poison guard (expired_claims + 1). Fenced: the UPDATE re-checks status and token, so a row completed meanwhile is skipped,
 * and a relay that still holds a forced claim loses it at its completion fence.
 */
const RELEASE = `
  WITH target AS (
    SELECT id FROM outbox_events
    WHERE status = 'PROCESSING' AND ($1::text IS NULL OR tenant_id = $1::text)
      AND ($2::uuid IS NULL OR claim_token = $2::uuid)
      AND ($3::boolean OR lease_expires_at <= now())
    ORDER BY lease_expires_at, id LIMIT $4
    FOR UPDATE SKIP LOCKED
  )
  UPDATE outbox_events e SET status = 'PENDING', claim_token = NULL, lease_expires_at = NULL,
    claimed_at = NULL, next_attempt_at = now(), updated_at = now(),
    expired_claims = e.expired_claims + 1
  FROM target WHERE e.id = target.id AND e.status = 'PROCESSING'
    AND ($2::uuid IS NULL OR e.claim_token = $2::uuid)
  RETURNING e.id::text AS id`;

export async function releaseStuckEvents(
  db: SqlExecutor,
  args: { tenantId: string | null; claimToken: string | null; force: boolean; limit: number },
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(RELEASE, [
    args.tenantId,
    args.claimToken,
    args.force,
    args.limit,
  ]);
  return rows.map((r) => r.id);
}
