import type { SqlExecutor } from '../../sql/executor';
import {
  renewalLockBound,
  renewalLockWait,
  renewalStatement,
  type RenewalTiming,
} from '../../lease/renewalLock';
import { BATCH_FENCE, batchOwned, claimArrays, TABLE } from './fragments';

/**
 * Extends, in one statement, the leases of the claims waiting in the worker's local queue:
 * $1 ids and $2 their claim tokens, pairwise. Each row is fenced like FENCE (same token,
 * PROCESSING, unexpired on the database clock). Returns the ids still owned. Its wait for the row
 * locks is bounded by half the heartbeat interval ($4: renewalLockBound), and `signal` ends the
 * statement when the lease kit gives up on the renewal, as renewLease's. The rows are
 * reached by primary key only, whatever the rows in flight or the history (see BATCH_OWNED).
 */
const SQL = `
  WITH ${batchOwned(renewalLockBound('$4'))}
  UPDATE ${TABLE} AS r SET lease_expires_at = now() + $3::int * interval '1 millisecond'
  WHERE ${BATCH_FENCE}
  RETURNING r.id`;

export async function renewQueued(
  db: SqlExecutor,
  claims: ReadonlyArray<{ readonly id: string; readonly claimToken: string }>,
  lease: RenewalTiming,
  signal?: AbortSignal,
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const values = [...claimArrays(claims), lease.leaseMs, renewalLockWait(lease.heartbeatIntervalMs)];
  const rows = await renewalStatement(db, lease, signal, (options) =>
    db.query<{ id: string }>(SQL, values, options),
  );
  return new Set(rows.map((row) => row.id));
}
