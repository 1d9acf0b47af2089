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

export function holdBack(db: SqlExecutor, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return Promise.resolve(0);
  return db.execute(HOLD_BACK, [ids]);
}
