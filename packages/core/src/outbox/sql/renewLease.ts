import type { SqlExecutor } from '../../sql/executor';
import {
  renewalLockBound,
  renewalLockWait,
  renewalStatement,
  type RenewalTiming,
} from '../../lease/renewalLock';
import { claimFence, msInterval } from './fragments';

const SET = `UPDATE outbox_events e SET lease_expires_at = now() + ${msInterval('$2')}`;
/**
 * By primary key alone: the relay knows the ids it claimed. The fence's status is opaque
 * (claimFence byId): with 'PROCESSING' literal the planner read every claim's rows off the lease
 * index and matched the ids against them, so each heartbeat cost every row in flight.
 */
const RENEW_BY_ID = `${SET} WHERE e.id = ANY($3::uuid[]) AND ${claimFence('$1', { byId: true })}
  AND ${renewalLockBound('$4')}`;
/** By token alone: among the rows in flight (outbox_events_lease_idx covers PROCESSING). */
const RENEW_BY_TOKEN = `${SET} WHERE ${claimFence('$1')} AND ${renewalLockBound('$3')}`;

/**
 * Extends the lease of every row still held under `token` (among `ids` when given, so the
 * statement goes by primary key) to `lease.leaseMs`; returns how many it renewed. Its wait for the
 * row locks is bounded by half the heartbeat interval (renewalLockBound: a row an operator's open
 * transaction holds fails it with 55P03), and `signal`, the lease kit giving up on the renewal
 * (its deadline, one heartbeat interval), ends the statement with it (review 94).
 */
export function renewLease(
  db: SqlExecutor,
  token: string,
  lease: RenewalTiming,
  ids?: readonly string[],
  signal?: AbortSignal,
): Promise<number> {
  const wait = renewalLockWait(lease.heartbeatIntervalMs);
  return renewalStatement(db, lease, signal, (options) =>
    ids
      ? db.execute(RENEW_BY_ID, [token, lease.leaseMs, ids, wait], options)
      : db.execute(RENEW_BY_TOKEN, [token, lease.leaseMs, wait], options),
  );
}
