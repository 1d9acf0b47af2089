import type { SqlExecutor } from '../../sql/executor';
import { claimFence, msInterval } from './fragments';

const SET = `UPDATE outbox_events e SET lease_expires_at = now() + ${msInterval('$2')}`;
/**
 * By primary key alone: the relay knows the ids it claimed. The fence's status is opaque
 * (claimFence byId): with 'PROCESSING' literal the planner read every claim's rows off the lease
 * index and matched the ids against them, so each heartbeat cost every row in flight.
 */
const RENEW_BY_ID = `${SET} WHERE e.id = ANY($3::uuid[]) AND ${claimFence('$1', { byId: true })}`;
/** By token alone: among the rows in flight (outbox_events_lease_idx covers PROCESSING). */
const RENEW_BY_TOKEN = `${SET} WHERE ${claimFence('$1')}`;

/**
 * Extends the lease of every row still held under `token` (among `ids` when given, so the
 * statement goes by primary key); returns how many it renewed.
 */
export function renewLease(
  db: SqlExecutor,
  token: string,
  leaseMs: number,
  ids?: readonly string[],
): Promise<number> {
  if (ids) return db.execute(RENEW_BY_ID, [token, leaseMs, ids]);
  return db.execute(RENEW_BY_TOKEN, [token, leaseMs]);
}
