import type { SqlExecutor } from '../../sql/executor';

/**
 * Hands back every row still claimed under a token the relay dropped (a claim, completion or
 * release it gave up on: abandonedClaims.ts), as releaseClaims does: PENDING, retry_count and the
 * poison guard's expired_claims untouched, so neither an attempt nor an expired claim is counted.
 * The claim counter is decremented for $1 (claims whose rows never reached the publisher), kept
 * for $2 (published, their completion lost).
 *
 * No lease condition: nothing else holds these tokens, so an expired lease under one is not a
 * crashed relay's (which lease recovery would count) but a statement given up on. By token among
 * the rows in flight (outbox_events_lease_idx covers PROCESSING).
 */
const RELEASE_ABANDONED = `
  UPDATE outbox_events e SET status = 'PENDING', claim_token = NULL, lease_expires_at = NULL,
    claimed_at = NULL, updated_at = now(),
    claim_count = CASE WHEN e.claim_token = ANY($1::uuid[]) THEN greatest(e.claim_count - 1, 0)
      ELSE e.claim_count END
  WHERE e.status = 'PROCESSING' AND e.claim_token = ANY($1::uuid[] || $2::uuid[])`;

/** Returns how many rows it handed back. */
export function releaseAbandoned(
  db: SqlExecutor,
  unpublished: readonly string[],
  published: readonly string[],
): Promise<number> {
  return db.execute(RELEASE_ABANDONED, [unpublished, published]);
}
