import type { SqlExecutor } from '../../sql/executor';
import { TABLE } from './fragments';

/**
 * Operator release: PROCESSING receipts of scope $1 whose lease expired (or, with $3 force,
 * every receipt of the claim token $2, for a worker known to be dead) go back to PENDING, due
 * now, and the attempt their claim consumed is given back (a dead worker is not a failed
 * attempt; lifetime_attempts keeps the history). Fenced: the UPDATE re-checks status and token,
 * and bumping row_version makes a worker that still holds a forced claim fail its completion.
 */
const SQL = `
  UPDATE ${TABLE} r
  SET status = 'PENDING', attempts = greatest(r.attempts - 1, 0), next_attempt_at = now(),
      claim_token = NULL, lease_expires_at = NULL, row_version = r.row_version + 1, updated_at = now()
  WHERE r.id IN (
    SELECT id FROM ${TABLE}
    WHERE scope = $1 AND status = 'PROCESSING'
      AND ($2::uuid IS NULL OR claim_token = $2::uuid)
      AND ($3::boolean OR lease_expires_at <= now())
    ORDER BY lease_expires_at, id LIMIT $4
    FOR UPDATE SKIP LOCKED
  ) AND r.status = 'PROCESSING' AND ($2::uuid IS NULL OR r.claim_token = $2::uuid)
  RETURNING r.id::text AS id`;

export async function releaseStuckReceipts(
  db: SqlExecutor,
  args: { scope: string; claimToken: string | null; force: boolean; limit: number },
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(SQL, [args.scope, args.claimToken, args.force, args.limit]);
  return rows.map((r) => r.id);
}
