import { fromPrisma, interactiveTransaction, type PrismaClientLike, type SqlExecutor } from '../sql/executor';
import { claimReceipts } from './sql/claim';
import { completeReceipt } from './sql/complete';
import { exhaustExpired } from './sql/exhaustExpired';
import { markDead } from './sql/markDead';
import { readClaimState, type ClaimState } from './sql/readClaimState';
import { renewLease } from './sql/renewLease';
import { scheduleRetry } from './sql/scheduleRetry';
import type { ResolvedInboxWorkerOptions } from './options';
import type { ClaimedReceipt } from './types';

/** The transitions the worker loop is given; tests may replace any of them. */
export interface InboxWorkerOps<TTx> {
  claim(limit: number): Promise<ClaimedReceipt[]>;
  exhaustExpired(limit: number): Promise<Array<{ id: string; consumer: string; attempts: number }>>;
  renew(receipt: ClaimedReceipt): Promise<boolean>;
  /** Runs `work` in the application's interactive transaction with the worker's timeouts. */
  transaction<T>(work: (tx: TTx) => Promise<T>): Promise<T>;
  complete(tx: TTx, receipt: ClaimedReceipt): Promise<boolean>;
  scheduleRetry(receipt: ClaimedReceipt, delayMs: number, error: string): Promise<boolean>;
  markDead(receipt: ClaimedReceipt, error: string): Promise<boolean>;
  readClaimState(receipt: ClaimedReceipt): Promise<ClaimState>;
}

const LOCK_TIMEOUT = `SELECT set_config('lock_timeout', $1, true) AS value`;

/** The SQL-backed transitions over the application's Prisma client. */
export function sqlWorkerOps<TTx>(
  client: PrismaClientLike,
  db: SqlExecutor,
  worker: ResolvedInboxWorkerOptions,
): InboxWorkerOps<TTx> {
  return {
    claim: (limit) => claimReceipts(db, worker.consumers, limit, worker.leaseMs),
    exhaustExpired: (limit) => exhaustExpired(db, worker.consumers, limit),
    renew: (r) => renewLease(db, r.id, r.claimToken, worker.leaseMs),
    transaction: <T>(work: (tx: TTx) => Promise<T>) =>
      interactiveTransaction(
        client,
        async (tx) => {
          await fromPrisma(tx).query(LOCK_TIMEOUT, [`${worker.lockTimeoutMs}ms`]);
          return work(tx as TTx);
        },
        { timeoutMs: worker.transactionTimeoutMs, maxWaitMs: worker.transactionMaxWaitMs },
      ),
    complete: (tx, r) => completeReceipt(fromPrisma(tx as never), r.id, r.claimToken),
    scheduleRetry: (r, delayMs, error) => scheduleRetry(db, r.id, r.claimToken, delayMs, error),
    markDead: (r, error) => markDead(db, r.id, r.claimToken, error),
    readClaimState: (r) => readClaimState(db, r.id, r.claimToken),
  };
}
