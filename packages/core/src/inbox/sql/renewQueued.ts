import type { SqlExecutor } from '../../sql/executor';
import { BATCH_FENCE, BATCH_OWNED, claimArrays, TABLE } from './fragments';

/**
 * Extends, in one statement, the leases of the claims waiting in the worker's local queue:
 * $1 ids and $2 their claim tokens, pairwise. Each row is fenced like FENCE (same token,
 * PROCESSING, unexpired on the database clock). Returns the ids still owned. The rows are
 * reached by primary key only, whatever the rows in flight or the history (see BATCH_OWNED).
 */
const SQL = `
  WITH ${BATCH_OWNED}
  UPDATE ${TABLE} AS r SET lease_expires_at = now() + $3::int * interval '1 millisecond'
  WHERE ${BATCH_FENCE}
  RETURNING r.id`;

export async function renewQueued(
  db: SqlExecutor,
  claims: ReadonlyArray<{ readonly id: string; readonly claimToken: string }>,
  leaseMs: number,
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(SQL, [...claimArrays(claims), leaseMs]);
  return new Set(rows.map((row) => row.id));
}
