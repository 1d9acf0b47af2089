import { abortableDelay } from '../backoff';
import { deadlineSignal } from '../deadline';
import type { SqlExecutor } from './executor';

/**
 * What became of a transaction whose COMMIT was sent and whose answer never came back, asked of
 * PostgreSQL itself: `txid_status` (PostgreSQL 10+) is made for exactly this. The transaction's
 * id is read as its last statement before the COMMIT (an id exists once it wrote something).
 */

const TRANSACTION_ID = 'SELECT txid_current_if_assigned()::text AS xid';

// 'committed', 'aborted', 'in progress', or NULL for an id too old to tell.
const STATUS = 'SELECT txid_status($1::bigint) AS status';

/** Between two questions while the transaction is still in progress. */
const ASK_AGAIN_MS = 50;

/** The id of `tx`'s transaction, or null when it has written nothing (its COMMIT changes nothing). */
export async function writtenTransactionId(tx: SqlExecutor): Promise<string | null> {
  const [row] = await tx.query<{ xid: string | null }>(TRANSACTION_ID);
  return row?.xid ?? null;
}

export type CommitOutcome = 'committed' | 'aborted' | 'unknown';

/**
 * The outcome of transaction `xid`, asked on `db` (another connection) for at most `withinMs`:
 * 'committed' or 'aborted' as PostgreSQL records it, asked again while it is still in progress (the
 * COMMIT may still be on its way, or its session not yet ended); 'unknown' when PostgreSQL did not
 * tell in time, failed, or no longer knows the id. Never throws.
 */
export async function commitOutcome(db: SqlExecutor, xid: string, withinMs: number): Promise<CommitOutcome> {
  const signal = deadlineSignal(withinMs);
  try {
    for (;;) {
      const [row] = await db.query<{ status: string | null }>(STATUS, [xid], { signal });
      if (row?.status === 'committed' || row?.status === 'aborted') return row.status;
      if (row?.status !== 'in progress') return 'unknown';
      await abortableDelay(ASK_AGAIN_MS, signal);
    }
  } catch {
    return 'unknown';
  }
}
