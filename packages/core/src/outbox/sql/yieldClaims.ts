import type { SqlExecutor } from '../../sql/executor';
import { claimFence } from './fragments';

/**
 * Gives up a claim whose publish close() stopped waiting for (it outlasted shutdownTimeout): its
 * rows go back PENDING, due no sooner than their lease would have expired, so they are held from
 * other relays exactly as long as the lease held them (the abandoned publish may still land; a
 * key's later events stay behind a PENDING head). retry_count, claim_count and the poison guard's
 * expired_claims are untouched: an orderly close is not a crash, and left to lease recovery the
 * claim counted as one, so a broker slower than shutdownTimeout over a few deploys failed healthy
 * events (review 97). Fenced by token and lease (claimFence byId, as releaseClaims): a claim
 * already lost is left to whoever holds its rows, and an expired one to lease recovery.
 */
const YIELD = `
  UPDATE outbox_events e SET status = 'PENDING', claim_token = NULL, lease_expires_at = NULL,
    claimed_at = NULL, updated_at = now(),
    next_attempt_at = greatest(e.next_attempt_at, e.lease_expires_at)
  WHERE e.id = ANY($2::uuid[]) AND ${claimFence('$1', { byId: true })}`;

/** Returns how many rows it gave up. */
export function yieldClaims(db: SqlExecutor, token: string, ids: readonly string[]): Promise<number> {
  return db.execute(YIELD, [token, ids]);
}
