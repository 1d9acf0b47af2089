import type { SqlExecutor } from '../../sql/executor';
import { utf16Left, utf16Length } from '../../sql/textBound';
import { MAX_STORED_ERROR_CHARS } from '../../redact/redact';
import { TABLE } from './fragments';

/** Why the sweep made a receipt DEAD: appended to its last_error, and the dead event's error. */
export const EXHAUSTED_ERROR = 'attempts exhausted: the last claim expired without completing';

/** ' | ' before EXHAUSTED_ERROR, and '…' after an earlier error that had to be cut. */
const EARLIER_ERROR_UNITS = MAX_STORED_ERROR_CHARS - EXHAUSTED_ERROR.length - ' | '.length - 1;

/**
 * The new last_error: the earlier error (already redacted and bounded when written) and ' | ' and
 * $4 (EXHAUSTED_ERROR), within MAX_STORED_ERROR_CHARS: the earlier error is cut (with '…') to make
 * room. An earlier error that ends with $4 already (a requeued receipt that crashed again) is
 * kept as it is: each requeue-then-crash appended it again, without bound (review 83).
 */
const LAST_ERROR = `CASE
    WHEN last_error IS NULL THEN $4::text
    WHEN right(last_error, char_length($4::text)) = $4::text THEN last_error
    WHEN ${utf16Length('last_error')} <= ${EARLIER_ERROR_UNITS} THEN last_error || ' | ' || $4::text
    ELSE ${utf16Left('last_error', String(EARLIER_ERROR_UNITS))} || '… | ' || $4::text
  END`;

/**
 * Abandoned claims (expired lease) whose retry-cycle budget is spent become DEAD: the crash
 * consumed the last attempt. The budget is the sweeping worker's $3 (worker.maxAttempts), the
 * one its claim takes such a row under (claim.ts): every expired claim is either claimed again
 * or swept, by the same worker. Returns the ids made DEAD.
 */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'DEAD', dead_at = now(), claim_token = NULL, lease_expires_at = NULL,
      last_error = ${LAST_ERROR},
      row_version = row_version + 1, updated_at = now()
  WHERE id IN (
    SELECT id FROM ${TABLE}
    WHERE consumer = ANY($1::text[]) AND status = 'PROCESSING'
      AND lease_expires_at <= now() AND attempts >= $3::int
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  RETURNING id, consumer, attempts`;

export async function exhaustExpired(
  db: SqlExecutor,
  consumers: readonly string[],
  limit: number,
  maxAttempts: number,
): Promise<Array<{ id: string; consumer: string; attempts: number }>> {
  if (consumers.length === 0) return [];
  return db.query(SQL, [consumers, limit, maxAttempts, EXHAUSTED_ERROR]);
}
