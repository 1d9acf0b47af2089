import type { SqlExecutor } from '../../sql/executor';
import { BATCH_HELD, BATCH_HELD_FENCE, claimArrays, TABLE } from './fragments';

/**
 * Gives back claims that never started a handler (the worker's local queue at close(), a handler
 * transaction that never got a session): per ($1 id, $2 token) pair, a row still PROCESSING under
 * that claim token (BATCH_HELD), its lease run out or not, becomes due again at its old due time, or $3 ms from now when given (an outage: claimed again
 * at once, it would fail again at once), and the attempt its claim consumed is returned (attempts
 * and lifetime_attempts - 1; PENDING when that leaves no attempt in the cycle, else RETRYABLE).
 * Returns the ids released. The rows are reached by primary key only (see BATCH_OWNED).
 *
 * Not fenced by the lease: no handler ran, and a row still under this claim token was claimed by
 * nobody since, so giving it back is this worker's to do however late. Fenced by the lease as a
 * completion is, a give-back that reached the database after the lease ran out there (a database
 * slow enough that the lease was lost while the handler transaction waited) was refused: the claim
 * kept the attempt it was charged and was recovered as abandoned for one more, attempts no handler
 * used, in the end DEAD unrun (fault-tests/operations/slow-database).
 */
const SQL = `
  WITH ${BATCH_HELD}
  UPDATE ${TABLE} AS r
  SET status = CASE WHEN r.attempts > 1 THEN 'RETRYABLE' ELSE 'PENDING' END,
      attempts = greatest(r.attempts - 1, 0), lifetime_attempts = greatest(r.lifetime_attempts - 1, 0),
      lease_expires_at = NULL,
      next_attempt_at = CASE WHEN $3::int IS NULL THEN r.next_attempt_at
                             ELSE now() + $3::int * interval '1 millisecond' END,
      row_version = r.row_version + 1, updated_at = now()
  WHERE ${BATCH_HELD_FENCE}
  RETURNING r.id`;

export async function releaseClaims(
  db: SqlExecutor,
  claims: ReadonlyArray<{ readonly id: string; readonly claimToken: string }>,
  dueInMs: number | null = null,
): Promise<string[]> {
  if (claims.length === 0) return [];
  const rows = await db.query<{ id: string }>(SQL, [...claimArrays(claims), dueInMs]);
  return rows.map((row) => row.id);
}
