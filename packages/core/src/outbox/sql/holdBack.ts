import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus } from './fragments';

/**
 * Rows handed back `unavailable` earlier ($1 ids), still PENDING (not claimed again meanwhile),
 * go behind every row due now (next_attempt_at at least now, as releaseClaims puts the rows it
 * hands back): a half-open probe claims the oldest due row, so after a failed probe it takes a row
 * that became due before this one rather than another just found unavailable. By primary key
 * alone (opaque status).
 */
const HOLD_BACK = `
  UPDATE outbox_events e SET next_attempt_at = greatest(e.next_attempt_at, now())
  WHERE e.id = ANY($1::uuid[]) AND e.status = ${opaqueStatus('PENDING')}`;

/**
 * The same for the oldest due rows ($3 at most) of the destinations a failed probe found
 * unavailable ($2; '' for the default destination, which emit never names ''): rows of a dead
 * destination that no cycle tried yet (a backlog larger than a batch) were older than any other
 * destination's and each cost a probe (review 46). Read off the due order, as the claim reads it.
 */
const HOLD_BACK_DUE = `
  UPDATE outbox_events e SET next_attempt_at = greatest(e.next_attempt_at, now())
  WHERE e.id = ANY (ARRAY(
      SELECT d.id FROM outbox_events d
      WHERE d.status = 'PENDING' AND d.next_attempt_at < now()
        AND coalesce(d.destination, '') = ANY($1::text[])
      ORDER BY d.next_attempt_at LIMIT $2))
    AND e.status = ${opaqueStatus('PENDING')}`;

export async function holdBack(
  db: SqlExecutor,
  ids: readonly string[],
  destinations: readonly (string | null)[],
  limit: number,
): Promise<number> {
  let held = ids.length === 0 ? 0 : await db.execute(HOLD_BACK, [ids]);
  if (destinations.length > 0 && limit > 0)
    held += await db.execute(HOLD_BACK_DUE, [[...new Set(destinations.map((d) => d ?? ''))], limit]);
  return held;
}
