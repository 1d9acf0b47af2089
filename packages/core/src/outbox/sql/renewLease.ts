import type { SqlExecutor } from '../../sql/executor';
import { claimFence, msInterval } from './fragments';

const RENEW = `
  UPDATE outbox_events e SET lease_expires_at = now() + ${msInterval('$2')}
  WHERE e.claim_token = $1::uuid AND ${claimFence('$1')}`;

/** Extends the lease of every row still held under `token`; returns how many it renewed. */
export function renewLease(db: SqlExecutor, token: string, leaseMs: number): Promise<number> {
  return db.execute(RENEW, [token, leaseMs]);
}
