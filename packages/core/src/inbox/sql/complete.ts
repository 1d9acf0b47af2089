import type { SqlExecutor } from '../../sql/executor';
import { FENCE, TABLE } from './fragments';

/** Written inside the handler transaction; false (lost claim) must roll that transaction back. */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'COMPLETED', completed_at = now(), lease_expires_at = NULL,
      row_version = row_version + 1, updated_at = now()
  WHERE ${FENCE}`;

export async function completeReceipt(tx: SqlExecutor, id: string, claimToken: string): Promise<boolean> {
  return (await tx.execute(SQL, [id, claimToken])) === 1;
}
