import type { SqlExecutor } from '../../sql/executor';
import { FENCE, TABLE } from './fragments';

/** RETRYABLE, due `delayMs` after now() on the database clock. False: the claim was lost. */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'RETRYABLE', next_attempt_at = now() + $3::int * interval '1 millisecond',
      lease_expires_at = NULL, last_error = $4, row_version = row_version + 1, updated_at = now()
  WHERE ${FENCE}`;

export async function scheduleRetry(
  db: SqlExecutor,
  id: string,
  claimToken: string,
  delayMs: number,
  error: string,
): Promise<boolean> {
  return (await db.execute(SQL, [id, claimToken, delayMs, error])) === 1;
}
