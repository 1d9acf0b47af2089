import type { SqlExecutor } from '../../sql/executor';
import { FENCE, TABLE } from './fragments';

/** DEAD with the redacted error. False: the claim was lost. */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'DEAD', dead_at = now(), lease_expires_at = NULL, last_error = $3,
      row_version = row_version + 1, updated_at = now()
  WHERE ${FENCE}`;

export async function markDead(
  db: SqlExecutor,
  id: string,
  claimToken: string,
  error: string,
): Promise<boolean> {
  return (await db.execute(SQL, [id, claimToken, error])) === 1;
}
