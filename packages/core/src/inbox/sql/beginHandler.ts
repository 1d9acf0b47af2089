import type { SqlExecutor } from '../../sql/executor';
import { FENCE, HANDLER_CLAIM, TABLE } from './fragments';

/**
 * The first statement of every handler transaction, one round trip: sets lock_timeout for
 * this transaction ($3, e.g. '1000ms') and HANDLER_CLAIM, and proves the claim alive on the
 * database clock ($1 id, $2 claim token). A claim that waited in the worker's local queue is
 * started only if this read still finds it owned and unexpired.
 */
const SQL = `
  SELECT set_config('lock_timeout', $3, true) AS lock_timeout,
         set_config(${HANDLER_CLAIM}, $2::uuid::text, true) AS claim,
         EXISTS (SELECT 1 FROM ${TABLE} WHERE ${FENCE}) AS owned`;

export async function beginHandler(
  tx: SqlExecutor,
  id: string,
  claimToken: string,
  lockTimeoutMs: number,
): Promise<boolean> {
  const [row] = await tx.query<{ owned: boolean }>(SQL, [id, claimToken, `${lockTimeoutMs}ms`]);
  return row?.owned === true;
}
