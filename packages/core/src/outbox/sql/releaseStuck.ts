import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus, saturatingIncrement } from './fragments';

/**
 * Operator release: PROCESSING rows whose lease expired (or, with $3 force, every row of the
 * claim token $2, for a process known to be dead) go back to PENDING, due now. retry_count is
 * untouched (a dead process is not a failed attempt); like lease recovery, the release counts
 * as a lease expiry for the poison guard (expired_claims + 1). Fenced: the UPDATE re-checks status and token, so a row completed meanwhile is skipped,
 * and a relay that still holds a forced claim loses it at its completion fence.
 *
 * Shape (test/outbox/maintenanceCost.test.ts): force widens the lease bound to 'infinity' (every
 * PROCESSING row has a lease) instead of `($3 OR lease_expires_at <= now())`, so the bound is the
 * lease index's condition under a generic plan too, which otherwise read every live lease. The
 * UPDATE re-checks the status opaque (opaqueStatus), so it finds the targets by primary key: with
 * 'PROCESSING' literal the planner read every in-flight row off the lease index and rescanned the
 * targets for each (50 released beside 5,000 live leases: 510,300 rows of work).
 */
const RELEASE = `
  WITH target AS (
    SELECT id FROM outbox_events
    WHERE status = 'PROCESSING' AND ($1::text IS NULL OR tenant_id = $1::text)
      AND ($2::uuid IS NULL OR claim_token = $2::uuid)
      AND lease_expires_at <= CASE WHEN $3::boolean THEN 'infinity'::timestamptz ELSE now() END
    ORDER BY lease_expires_at, id LIMIT $4
    FOR UPDATE SKIP LOCKED
  )
  UPDATE outbox_events e SET status = 'PENDING', claim_token = NULL, lease_expires_at = NULL,
    claimed_at = NULL, next_attempt_at = now(), updated_at = now(),
    expired_claims = ${saturatingIncrement('e.expired_claims')}
  FROM target WHERE e.id = target.id AND e.status = ${opaqueStatus('PROCESSING')}
    AND ($2::uuid IS NULL OR e.claim_token = $2::uuid)
  RETURNING e.id::text AS id`;

/**
 * A dry run's answer, read without taking a lock: the release's candidates, in its order (review
 * 123). Run as the release in a savepoint, the dry run's UPDATE locked the rows of the claim it
 * was asked about until its rollback, so a relay still holding that claim waited to complete its
 * batch (or failed it under its lock_timeout). A row another transaction has locked at that
 * instant, which the release would skip, cannot be seen without locking it: it is counted.
 */
const PREVIEW = `
  SELECT id::text AS id FROM outbox_events
  WHERE status = 'PROCESSING' AND ($1::text IS NULL OR tenant_id = $1::text)
    AND ($2::uuid IS NULL OR claim_token = $2::uuid)
    AND lease_expires_at <= CASE WHEN $3::boolean THEN 'infinity'::timestamptz ELSE now() END
  ORDER BY lease_expires_at, id LIMIT $4`;

/** Releases (RELEASE) or, with `dryRun`, answers what the release would do without a lock (PREVIEW). */
export async function releaseStuckEvents(
  db: SqlExecutor,
  args: {
    tenantId: string | null;
    claimToken: string | null;
    force: boolean;
    limit: number;
    dryRun?: boolean;
  },
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(args.dryRun === true ? PREVIEW : RELEASE, [
    args.tenantId,
    args.claimToken,
    args.force,
    args.limit,
  ]);
  return rows.map((r) => r.id);
}
