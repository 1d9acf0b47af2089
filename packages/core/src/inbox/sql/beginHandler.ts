import type { SqlExecutor } from '../../sql/executor';
import { CONNECTION_CHECK } from '../../sql/transactionLimits';
import { FENCE, HANDLER_CLAIM, receiptLock, TABLE } from './fragments';
import { SESSION_DEFAULTS_READ } from './sessionDefaults';

/**
 * The first statement of every handler transaction, one round trip: sets, for this transaction,
 * lock_timeout ($3, e.g. '1000ms'), statement_timeout ($4, worker.transactionTimeoutMs) and
 * HANDLER_CLAIM, and proves the claim alive on the database clock ($1 id, $2 claim token). A claim
 * that waited in the worker's local queue is started only if this read still finds it owned and
 * unexpired.
 *
 * It also takes the receipt's advisory lock in shared mode for the rest of the transaction
 * (receiptLock), without waiting: the operator's forced release takes a receipt only if it gets
 * that lock exclusively, so it leaves a live handler's claim alone. Handler transactions never
 * wait for each other (a claim reclaimed after its lease expired runs beside the old handler,
 * whose completion then fails the fence, as before); only a forced release holds the lock
 * exclusively, for its own short transaction, and a handler transaction that finds it so held
 * reads its claim as lost (the release is taking it), so it starts no handler on a claim the
 * release has just given back. One window is left: this statement reads the claim in the snapshot
 * it took when it started, so a release that commits after that and before the lock is tried
 * (the lock is then free) is not seen, and the handler starts on the released claim. Its writes
 * never commit: the completion's fence reads the row afresh and finds the claim gone, and the
 * transaction rolls back (test/inbox/releaseRacesHandlerStart.test.ts); only what the handler does
 * outside the transaction happens. Closing it would take a second statement per handler
 * transaction, or a row lock held for the whole handler.
 *
 * statement_timeout bounds every later statement of the transaction on every adapter. node-postgres
 * and Kysely set it before this statement too (transactionLimits.ts); Prisma's own `timeout` cannot
 * end a statement in progress (it rolls back once the connection is free), so without it a
 * handler statement waiting on a lock held its transaction, and its locks, past the deadline.
 * CONNECTION_CHECK makes the backend notice within a second that the connection was closed (the
 * worker gave up on the transaction, or the process ended) instead of running a long handler
 * statement on, with its locks, until its end.
 */
const SQL = `
  SELECT set_config('lock_timeout', $3, true) AS lock_timeout,
         set_config('statement_timeout', $4, true) AS statement_timeout,
         set_config(${HANDLER_CLAIM}, $2::uuid::text, true) AS claim,
         ${CONNECTION_CHECK.trim()} AS connection_check,
         current_setting('transaction_isolation') AS isolation,
         current_setting('transaction_read_only') = 'on' AS read_only,
         ${SESSION_DEFAULTS_READ} AS session,
         pg_try_advisory_xact_lock_shared(${receiptLock('$1::uuid')})
           AND EXISTS (SELECT 1 FROM ${TABLE} WHERE ${FENCE}) AS owned`;

/**
 * `owned`: the claim is alive. `session`: the session defaults a handler could leave on the
 * connection, as the transaction found them (sessionDefaults.ts; the completion puts back what the
 * handler changed). `isolation` and `readOnly`: the transaction's isolation level and
 * access mode, read in the same round trip. Anything but `read committed` (a database or connection
 * whose default is REPEATABLE READ or SERIALIZABLE, possibly left by an earlier handler's `SET
 * SESSION CHARACTERISTICS`) would make the completion fail with 40001 once a lease renewal updated
 * the receipt row, and READ ONLY would refuse it (25006): the worker then runs the transaction
 * again at READ COMMITTED, READ WRITE (workerOps).
 */
export async function beginHandler(
  tx: SqlExecutor,
  claim: { readonly id: string; readonly claimToken: string },
  limits: { readonly lockTimeoutMs: number; readonly transactionTimeoutMs: number },
): Promise<{
  readonly owned: boolean;
  readonly isolation: string;
  readonly readOnly: boolean;
  readonly session: string | null;
}> {
  const [row] = await tx.query<{ owned: boolean; isolation: string; read_only: boolean; session: unknown }>(
    SQL,
    [claim.id, claim.claimToken, `${limits.lockTimeoutMs}ms`, `${limits.transactionTimeoutMs}ms`],
  );
  return {
    owned: row?.owned === true,
    isolation: row?.isolation ?? 'read committed',
    readOnly: row?.read_only === true,
    session: typeof row?.session === 'string' ? row.session : null,
  };
}
