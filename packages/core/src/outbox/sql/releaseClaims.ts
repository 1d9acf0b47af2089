import type { SqlExecutor } from '../../sql/executor';
import { claimFence } from './fragments';

// The claim is handed back as if it never happened: claim_count is decremented too,
// since no publish started (or the broker could not be reached) and the poison guard must
// not count it; retry_count is untouched, so no attempt is spent.
// The rows go behind those already due (next_attempt_at at least now): a destination the broker
// cannot take (one queue the role may not send to, one topic offline) kept its events at the head
// of the due order, so with a batch of them due every claim took only them and the events of
// every other destination waited for ever (test/outbox/unavailableDestination.test.ts). A key's
// later events stay behind its head, so ordering is kept.
// By primary key alone (claimFence byId): with 'PROCESSING' literal, the planner read every
// claim's rows off the lease index and matched the ids against them, so a release cost every
// row in flight (test/outbox/maintenanceCost.test.ts).
const RELEASE = `
  UPDATE outbox_events e SET status = 'PENDING', claim_token = NULL, lease_expires_at = NULL,
    claimed_at = NULL, claim_count = greatest(e.claim_count - 1, 0), updated_at = now(),
    next_attempt_at = greatest(e.next_attempt_at, now())
  WHERE e.id = ANY($2::uuid[]) AND ${claimFence('$1', { byId: true })}`;

/** Releases claimed rows whose publish never started (shutdown) or whose broker was unavailable; returns how many. */
export function releaseClaims(db: SqlExecutor, token: string, ids: readonly string[]): Promise<number> {
  return db.execute(RELEASE, [token, ids]);
}
