import { abortableDelay } from '../backoff';
import { deadlineSignal } from '../deadline';
import type { SqlExecutor } from './executor';

/**
 * What became of a transaction whose COMMIT was sent and whose answer never came back, asked of
 * PostgreSQL itself: `txid_status` (PostgreSQL 10+) is made for exactly this. The transaction's
 * id is read with its first statement (limitAndIdentify, transactionLimits.ts).
 */

// 'committed', 'aborted', 'in progress', or NULL for an id too old to tell.
const STATUS = 'SELECT txid_status($1::bigint) AS status';

/** Between two questions while the transaction is still in progress. */
const ASK_AGAIN_MS = 50;

export type CommitOutcome = 'committed' | 'aborted' | 'unknown';

/**
 * Opens, for one lookup bounded by `withinMs`, a connection other than the one an executor's
 * transactions run on, and closes it afterwards (close does not wait for it to end).
 */
export type OtherConnection = (withinMs: number) => { readonly db: SqlExecutor; close(): void };

const otherConnections = new WeakMap<SqlExecutor, OtherConnection>();

/**
 * Registers where to ask about the transactions of `db`, an executor over one connection (the
 * application's pg client, fromPgClient): that connection's queue waits behind the COMMIT whose
 * answer was lost, so a question asked on it would never be answered.
 */
export function askOutcomesElsewhere(db: SqlExecutor, other: OtherConnection): void {
  otherConnections.set(db, other);
}

/** What askOutcomesElsewhere registered for `db`; none for an executor over a pool. */
export function otherConnectionOf(db: SqlExecutor): OtherConnection | undefined {
  return otherConnections.get(db);
}

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
