import type { SqlExecutor } from '../../sql/executor';
import { FENCE, TABLE } from './fragments';

/** Extends an owned, unexpired lease; false means the claim is lost. */
const SQL = `
  UPDATE ${TABLE} SET lease_expires_at = now() + $3::int * interval '1 millisecond'
  WHERE ${FENCE}`;

export async function renewLease(
  db: SqlExecutor,
  id: string,
  claimToken: string,
  leaseMs: number,
): Promise<boolean> {
  return (await db.execute(SQL, [id, claimToken, leaseMs])) === 1;
}
