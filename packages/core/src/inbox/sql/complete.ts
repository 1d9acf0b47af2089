import type { SqlExecutor } from '../../sql/executor';
import { FENCE, HANDLER_CLAIM, TABLE } from './fragments';
import { sessionDefaultsRestore } from './sessionDefaults';

/**
 * `lost_claim` and `transaction_ended` must roll the handler transaction back: the fence refused
 * the row, or the handler ended ferry's transaction itself (HANDLER_CLAIM is gone), so this
 * statement would commit on its own, apart from the handler's writes.
 */
export type CompletionOutcome = 'completed' | 'lost_claim' | 'transaction_ended';

/**
 * Written inside the handler transaction, and only there; it also puts back the session defaults
 * the handler changed ($3: what the transaction's first statement read, sessionDefaults.ts).
 */
const SQL = `
  WITH inside AS (
    SELECT current_setting(${HANDLER_CLAIM}, true) IS NOT DISTINCT FROM $2::uuid::text AS ok
  ), completed AS (
    UPDATE ${TABLE}
    SET status = 'COMPLETED', completed_at = now(), lease_expires_at = NULL,
        row_version = row_version + 1, updated_at = now()
    WHERE ${FENCE} AND (SELECT ok FROM inside)
    RETURNING id
  )
  SELECT CASE WHEN NOT (SELECT ok FROM inside) THEN 'transaction_ended'
              WHEN EXISTS (SELECT 1 FROM completed) THEN 'completed'
              ELSE 'lost_claim' END AS outcome,
         ${sessionDefaultsRestore('$3::text')} AS restored`;

export async function completeReceipt(
  tx: SqlExecutor,
  id: string,
  claimToken: string,
  sessionDefaults: string | null = null,
): Promise<CompletionOutcome> {
  const [row] = await tx.query<{ outcome: CompletionOutcome }>(SQL, [id, claimToken, sessionDefaults]);
  return row?.outcome ?? 'lost_claim';
}
