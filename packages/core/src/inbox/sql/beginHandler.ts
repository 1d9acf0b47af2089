import type { SqlExecutor } from '../../sql/executor';
import { limitSettings, limitValue } from '../../sql/transactionLimits';
import { FENCE, HANDLER_CLAIM, TABLE } from './fragments';

/**
 * The first statement of every handler transaction, one round trip: sets lock_timeout for
 * this transaction ($3, e.g. '1000ms') and HANDLER_CLAIM, and proves the claim alive on the
 * database clock ($1 id, $2 claim token). A claim that waited in the worker's local queue is
 * started only if this read still finds it owned and unexpired. LIMITED also sets the
 * transaction's time limits ($4, transactionLimits) on adapters that apply them as settings,
 * which then skip their own statement for them.
 */
const SQL = `
  SELECT set_config('lock_timeout', $3, true) AS lock_timeout,
         set_config(${HANDLER_CLAIM}, $2::uuid::text, true) AS claim,
         EXISTS (SELECT 1 FROM ${TABLE} WHERE ${FENCE}) AS owned`;

const LIMITED = `${SQL},
         ${limitSettings(4)}`;

export async function beginHandler(
  tx: SqlExecutor,
  id: string,
  claimToken: string,
  lockTimeoutMs: number,
  /** Set as the transaction's time limits (transactionLimits) when given. */
  limitMs?: number,
): Promise<boolean> {
  const lockTimeout = `${lockTimeoutMs}ms`;
  const [row] =
    limitMs === undefined
      ? await tx.query<{ owned: boolean }>(SQL, [id, claimToken, lockTimeout])
      : await tx.query<{ owned: boolean }>(LIMITED, [id, claimToken, lockTimeout, limitValue(limitMs)]);
  return row?.owned === true;
}
