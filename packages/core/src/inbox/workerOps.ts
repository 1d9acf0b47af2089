import { markTransactionEnded } from '../sql/endedTransactions';
import type { SqlExecutor, TransactionAdapter } from '../sql/executor';
import { FerryError } from '../errors';
import { InboxLeaseLostError } from './errors';
import { beginHandler } from './sql/beginHandler';
import { claimReceipts } from './sql/claim';
import { completeReceipt, type CompletionOutcome } from './sql/complete';
import { exhaustExpired } from './sql/exhaustExpired';
import { markDead } from './sql/markDead';
import { readClaimState, type ClaimState } from './sql/readClaimState';
import { releaseClaims } from './sql/releaseClaims';
import { renewLease } from './sql/renewLease';
import { renewQueued } from './sql/renewQueued';
import { scheduleRetry } from './sql/scheduleRetry';
import type { ResolvedInboxWorkerOptions } from './options';
import type { ClaimedReceipt } from './types';

/**
 * A handler transaction that did not run at READ COMMITTED, READ WRITE, thrown before the handler
 * runs. Its fenced completion updates the receipt row that the lease renewals update meanwhile,
 * which REPEATABLE READ and SERIALIZABLE refuse (40001): every handler longer than a heartbeat
 * failed its completion and went DEAD (review 26); READ ONLY refuses it at once (review 27). Thrown again when the adapter was asked for READ
 * COMMITTED (`asked`) and did not start it: a failure of the receipt, retried, naming the cause.
 */
class OtherIsolation extends FerryError {
  constructor(
    readonly isolation: string,
    readonly asked: 'read committed' | undefined,
  ) {
    super(
      'FERRY_DATABASE_ERROR',
      `the handler transaction runs at ${isolation}${asked ? ' although the transaction adapter was asked for read committed, read write (TransactionOptions.isolation; Prisma cannot set the access mode: a pooled connection a handler left READ ONLY by SET SESSION CHARACTERISTICS)' : ''}: ferry's fenced completion needs read committed, read write (its lease renewals update the receipt row meanwhile)`,
    );
  }
}

/**
 * Whether `error` is a first run's OtherIsolation (started again at READ COMMITTED). What a handler
 * threw passes through here too: a hostile Proxy whose prototype cannot be read is not one, and
 * is rethrown as it is (never replaced by what its trap threw).
 */
function isRetriedIsolation(error: unknown): boolean {
  try {
    return error instanceof OtherIsolation && error.asked === undefined;
  } catch {
    return false;
  }
}

/**
 * Whether `error` is a handler transaction still at another isolation than READ COMMITTED, READ
 * WRITE once rerun (OtherIsolation): a configuration, charged as the receipt's failure. A value
 * whose prototype cannot be read is not one.
 */
export function isIsolationRefusal(error: unknown): boolean {
  try {
    return error instanceof OtherIsolation;
  } catch {
    return false;
  }
}

/** The transitions the worker loop is given; tests may replace any of them. */
export interface InboxWorkerOps<TTx> {
  claim(limit: number): Promise<ClaimedReceipt[]>;
  exhaustExpired(limit: number): Promise<Array<{ id: string; consumer: string; attempts: number }>>;
  /**
   * Renews `receipt`'s lease. A renewal must not outlive its deadline in the lease kit, which
   * then sends the next: each heartbeat stacked one more statement (and connection) waiting on a
   * lock another session held on the row (review 93). The SQL ones bound their lock wait
   * (renewalLockBound) and end on `signal`, which aborts when the kit gives up on the renewal.
   */
  renew(receipt: ClaimedReceipt, signal?: AbortSignal): Promise<boolean>;
  /** Renews the leases of queued claims in one statement; resolves the ids still owned. `signal` as renew's. */
  renewQueued(receipts: readonly ClaimedReceipt[], signal?: AbortSignal): Promise<Set<string>>;
  /** Gives back unstarted claims and the attempt each consumed; resolves the ids released. */
  /** Gives unstarted claims back, their attempt returned; due again `dueInMs` from now when given. */
  release(receipts: readonly ClaimedReceipt[], dueInMs?: number): Promise<string[]>;
  /**
   * Runs `work` in a transaction of the application's client with the worker's timeouts.
   * Its first statement sets lock_timeout and statement_timeout and proves `receipt`'s claim
   * alive; a lost claim throws InboxLeaseLostError before `work` runs. `abandoned` aborts when
   * the worker stops waiting for the transaction (TransactionOptions.signal).
   */
  transaction<T>(receipt: ClaimedReceipt, work: (tx: TTx) => Promise<T>, abandoned?: AbortSignal): Promise<T>;
  complete(tx: TTx, receipt: ClaimedReceipt): Promise<CompletionOutcome>;
  scheduleRetry(receipt: ClaimedReceipt, delayMs: number, error: string): Promise<boolean>;
  markDead(receipt: ClaimedReceipt, error: string): Promise<boolean>;
  readClaimState(receipt: ClaimedReceipt): Promise<ClaimState>;
}

/**
 * The SQL-backed transitions: ferry's own on `db`, the handler's transaction (and the completion
 * inside it) on the application's client through `adapter`.
 */
export function sqlWorkerOps<TTx>(
  adapter: TransactionAdapter<TTx>,
  db: SqlExecutor,
  worker: ResolvedInboxWorkerOptions,
): InboxWorkerOps<TTx> {
  // The session defaults each handler transaction's first statement read, for its completion.
  const sessionOf = new WeakMap<object, string | null>();
  return {
    claim: (limit) => claimReceipts(db, worker.consumers, limit, worker.leaseMs, worker.maxAttempts),
    exhaustExpired: (limit) => exhaustExpired(db, worker.consumers, limit, worker.maxAttempts),
    renew: (r, signal) => renewLease(db, r.id, r.claimToken, worker, signal),
    renewQueued: (receipts, signal) => renewQueued(db, receipts, worker, signal),
    release: (receipts, dueInMs) => releaseClaims(db, receipts, dueInMs ?? null),
    transaction: async <T>(r: ClaimedReceipt, work: (tx: TTx) => Promise<T>, abandoned?: AbortSignal) => {
      // Each transaction's tx, marked ended once it settled (a kept context.tx is refused then).
      const handedOut: unknown[] = [];
      const run = (isolation?: 'read committed') =>
        adapter.transaction(
          async (tx) => {
            handedOut.push(tx);
            const begun = await beginHandler(adapter.bind(tx), r, worker);
            if (typeof tx === 'object' && tx !== null) sessionOf.set(tx, begun.session);
            if (begun.isolation !== 'read committed' || begun.readOnly) {
              throw new OtherIsolation(`${begun.isolation}${begun.readOnly ? ', read only' : ''}`, isolation);
            }
            if (!begun.owned) throw new InboxLeaseLostError(r.id);
            return work(tx);
          },
          {
            timeoutMs: worker.transactionTimeoutMs,
            maxWaitMs: worker.transactionMaxWaitMs,
            signal: abandoned,
            isolation,
          },
        );
      try {
        return await run();
      } catch (error) {
        // Rolled back before the handler ran: once more, at READ COMMITTED (no extra statement
        // for a connection already at it, the usual case).
        if (!isRetriedIsolation(error)) throw error;
        return await run('read committed');
      } finally {
        for (const tx of handedOut) markTransactionEnded(tx);
      }
    },
    complete: (tx, r) =>
      completeReceipt(
        adapter.bind(tx),
        r.id,
        r.claimToken,
        typeof tx === 'object' && tx !== null ? (sessionOf.get(tx) ?? null) : null,
      ),
    scheduleRetry: (r, delayMs, error) => scheduleRetry(db, r.id, r.claimToken, delayMs, error),
    markDead: (r, error) => markDead(db, r.id, r.claimToken, error),
    readClaimState: (r) => readClaimState(db, r.id, r.claimToken),
  };
}
