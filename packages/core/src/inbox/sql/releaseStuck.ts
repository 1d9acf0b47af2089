import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus } from '../../outbox/sql/fragments';
import { receiptLock, TABLE } from './fragments';

/**
 * Operator release: PROCESSING receipts of scope $1 whose lease expired (or, with $3 force,
 * every receipt of the claim token $2, for a worker known to be dead) go back to PENDING, due
 * now, and the attempt their claim consumed is given back (a dead worker is not a failed
 * attempt; lifetime_attempts keeps the history). Fenced: the UPDATE re-checks status and token,
 * and bumping row_version makes a worker that still holds a forced claim fail its completion.
 *
 * A forced release never takes a receipt whose handler transaction is alive (admin operations
 * never cancel a running handler): it takes a row only if it gets the receipt's advisory lock
 * exclusively, which a handler transaction holds shared from its first statement to its end
 * (receiptLock, beginHandler), and answers the others as `running`, untouched. The lock is held
 * to this transaction's end, so a handler transaction starting meanwhile reads its claim as lost.
 * A claim queued in the worker but not started holds no lock: it is released. An expired lease is
 * released without the lock, as a worker's claim reclaims it.
 *
 * The candidates are chosen once (`candidate`, LIMIT before the lock is tried: locks are taken
 * for at most $4 rows) and updated by primary key (`= ANY (ARRAY(...))`, an InitPlan), the
 * re-checked status opaque (opaqueStatus) so the lease index is no way in. As `id IN (...)`,
 * with statistics from before the rows were claimed, the planner read every row in flight off
 * the lease index and ran the sub-select again for each (a semi-join): 330,000 rows of work
 * beside 7,000 rows in flight, and more than $4 rows released, the rows it had just updated
 * being skipped by the sub-select's next run (test/inbox/maintenanceCost.test.ts). The forced
 * release by claim token still reads the scope's PROCESSING rows: no index holds claim tokens.
 */
const SQL = `
  WITH candidate AS (
    SELECT id FROM ${TABLE}
    WHERE scope = $1 AND status = 'PROCESSING'
      AND ($2::uuid IS NULL OR claim_token = $2::uuid)
      AND ($3::boolean OR lease_expires_at <= now())
    ORDER BY lease_expires_at, id LIMIT $4
    FOR UPDATE SKIP LOCKED
  ), checked AS MATERIALIZED (
    SELECT id, (NOT $3::boolean OR pg_try_advisory_xact_lock(${receiptLock('id')})) AS idle FROM candidate
  ), released AS (
    UPDATE ${TABLE} r
    SET status = 'PENDING', attempts = greatest(r.attempts - 1, 0), next_attempt_at = now(),
        claim_token = NULL, lease_expires_at = NULL, row_version = r.row_version + 1, updated_at = now()
    WHERE r.id = ANY (ARRAY(SELECT id FROM checked WHERE idle))
      AND r.status = ${opaqueStatus('PROCESSING')} AND ($2::uuid IS NULL OR r.claim_token = $2::uuid)
    RETURNING r.id
  )
  SELECT id::text AS id, true AS released FROM released
  UNION ALL
  SELECT id::text AS id, false AS released FROM checked WHERE NOT idle`;

export interface ReleasedReceipts {
  /** Ids handed back to PENDING. */
  readonly released: readonly string[];
  /** Ids of the claim whose handler transaction is alive: a forced release leaves them untouched. */
  readonly running: readonly string[];
}

export async function releaseStuckReceipts(
  db: SqlExecutor,
  args: { scope: string; claimToken: string | null; force: boolean; limit: number },
): Promise<ReleasedReceipts> {
  const rows = await db.query<{ id: string; released: boolean }>(SQL, [
    args.scope,
    args.claimToken,
    args.force,
    args.limit,
  ]);
  return {
    released: rows.filter((r) => r.released).map((r) => r.id),
    running: rows.filter((r) => !r.released).map((r) => r.id),
  };
}
