import type { SqlExecutor } from '../../sql/executor';
import {
  renewalLockBound,
  renewalLockWait,
  renewalStatement,
  type RenewalTiming,
} from '../../lease/renewalLock';
import { FENCE, TABLE } from './fragments';

/**
 * Extends an owned, unexpired lease; false means the claim is lost. Its wait for a row lock is
 * bounded by half the heartbeat interval ($4: renewalLockBound). `signal`: the lease kit gave up on
 * this renewal (its deadline, one heartbeat interval), which ends the statement with it.
 */
const SQL = `
  UPDATE ${TABLE} SET lease_expires_at = now() + $3::int * interval '1 millisecond'
  WHERE ${FENCE} AND ${renewalLockBound('$4')}`;

export async function renewLease(
  db: SqlExecutor,
  id: string,
  claimToken: string,
  lease: RenewalTiming,
  signal?: AbortSignal,
): Promise<boolean> {
  const values = [id, claimToken, lease.leaseMs, renewalLockWait(lease.heartbeatIntervalMs)];
  return (await renewalStatement(db, lease, signal, (options) => db.execute(SQL, values, options))) === 1;
}
