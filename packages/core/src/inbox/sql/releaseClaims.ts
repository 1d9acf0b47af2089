import type { SqlExecutor } from '../../sql/executor';
import { BATCH_FENCE, BATCH_OWNED, claimArrays, TABLE } from './fragments';

/**
 * Gives back claims that never started a handler (the worker's local queue at close(), a handler
 * transaction that never got a session): fenced like FENCE per ($1 id, $2 token) pair, the row
 * becomes due again at its old due time, or $3 ms from now when given (an outage: claimed again
 * at once, it would fail again at once), and the attempt its claim consumed is returned (attempts
 * and lifetime_attempts - 1; PENDING when that leaves no attempt in the cycle, else RETRYABLE).
 * Returns the ids released. The rows are reached by primary key only (see BATCH_OWNED).
 */
const SQL = `
  WITH ${BATCH_OWNED}
  UPDATE ${TABLE} AS r
  SET status = CASE WHEN r.attempts > 1 THEN 'RETRYABLE' ELSE 'PENDING' END,
      attempts = greatest(r.attempts - 1, 0), lifetime_attempts = greatest(r.lifetime_attempts - 1, 0),
      lease_expires_at = NULL,
      next_attempt_at = CASE WHEN $3::int IS NULL THEN r.next_attempt_at
                             ELSE now() + $3::int * interval '1 millisecond' END,
      row_version = r.row_version + 1, updated_at = now()
  WHERE ${BATCH_FENCE}
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
