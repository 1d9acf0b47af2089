import { FerryError } from '../errors';
import { integerOption } from '../optionChecks';
import type { SqlExecutor, TransactionOptions } from './executor';

/**
 * TransactionOptions for the clients that have no such options of their own (node-postgres,
 * Kysely); Prisma applies its own `timeout` and `maxWait`.
 */

const LIMIT = `
  SELECT set_config('statement_timeout', $1, true) AS statement_timeout,
         set_config('idle_in_transaction_session_timeout', $1, true) AS idle_timeout`;

/**
 * `timeoutMs` as transaction-local settings, the first statement of the transaction: no
 * statement and no pause between statements may last longer, and PostgreSQL ends a session
 * left idle in the transaction (so a stuck caller cannot hold its locks past the deadline).
 */
export async function limitTransaction(tx: SqlExecutor, options: TransactionOptions): Promise<void> {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  if (timeoutMs !== undefined) await tx.query(LIMIT, [`${timeoutMs}ms`]);
}

// txid_current() assigns the transaction its id now if it has none yet.
const IDENTIFY = 'SELECT txid_current()::text AS xid';
const LIMIT_AND_IDENTIFY = `${LIMIT}, txid_current()::text AS xid`;

/**
 * limitTransaction and the transaction's id in one round trip, for a transaction that changes
 * something (withDeadlines': the outcome of a COMMIT whose answer was lost is asked by this id,
 * commitOutcome.ts). A transaction that would have written nothing pays for an id all the same.
 */
export async function limitAndIdentify(tx: SqlExecutor, options: TransactionOptions): Promise<string> {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  const [row] =
    timeoutMs === undefined
      ? await tx.query<{ xid: string }>(IDENTIFY)
      : await tx.query<{ xid: string }>(LIMIT_AND_IDENTIFY, [`${timeoutMs}ms`]);
  return (row as { xid: string }).xid;
}

/** The longest statement_timeout PostgreSQL holds, which is also the longest delay of a Node timer. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * `timeoutMs` as the settings can hold it: an integer from 0 to MAX_TIMEOUT_MS, else
 * FERRY_CONFIG_INVALID. 0 is PostgreSQL's "no limit": no settings and no deadline (undefined).
 */
export function checkedTimeout(timeoutMs: number | undefined): number | undefined {
  if (timeoutMs === undefined) return undefined;
  const checked = integerOption('timeoutMs', timeoutMs, 0, MAX_TIMEOUT_MS);
  return checked === 0 ? undefined : checked;
}

/**
 * BEGIN and limitTransaction's settings in one simple-protocol string, one round trip, for a
 * client that sends its own BEGIN (node-postgres). Set before the first statement, the limits
 * bound it too: a setting made inside a statement does not bound that statement (a claim check
 * waiting behind a lock on its table would wait for as long as the lock is held). `timeoutMs`
 * is an integer (checkedTimeout), inlined: its text holds no quote.
 */
export function beginLimited(options: TransactionOptions): string {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  if (timeoutMs === undefined) return 'BEGIN';
  return `BEGIN; ${LIMIT.replaceAll('$1', `'${timeoutMs}ms'`).trim()}`;
}

/**
 * How long past `timeoutMs` a whole-transaction deadline waits (at most 1 s, at most timeoutMs):
 * here, and withDeadlines' (statementDeadline.ts) after it.
 */
export const DEADLINE_GRACE_MS = 1_000;

/** Where a transaction stands, for its deadline: once it asked to commit, the outcome is PostgreSQL's. */
export interface TransactionProgress {
  committing: boolean;
}

/**
 * When an adapter that holds the transaction's connection (node-postgres, Kysely) ends the
 * transaction while its work is still running: `ended` rejects
 * - with FERRY_TIMEOUT once `timeoutMs` (and its grace, so that a statement PostgreSQL's own limit
 *   cancels fails with PostgreSQL's error) passed, unless the transaction is committing by then;
 * - with the signal's reason once `options.signal` aborts (the caller gave up on the transaction),
 *   committing or not: the outcome of a commit in flight is then unknown to the caller.
 * The adapter then closes or rolls back the connection. Never settles without either.
 */
export function transactionDeadline(
  options: TransactionOptions,
  progress: Readonly<TransactionProgress>,
): { ended: Promise<never>; expired(): boolean; clear(): void } {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  const { signal } = options;
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const ended = new Promise<never>((_, reject) => {
    const end = (reason: unknown): void => {
      expired = true;
      reject(reason);
    };
    if (signal?.aborted) return end(signal.reason);
    if (signal) {
      onAbort = () => end(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (timeoutMs === undefined) return;
    timer = setTimeout(
      () => {
        if (progress.committing) return;
        end(
          new FerryError('FERRY_TIMEOUT', `the transaction did not finish within ${timeoutMs} ms`, {
            details: { timeoutMs },
          }),
        );
      },
      // Past MAX_TIMEOUT_MS a Node timer fires at once.
      Math.min(timeoutMs + Math.min(timeoutMs, DEADLINE_GRACE_MS), MAX_TIMEOUT_MS),
    );
  });
  ended.catch(() => undefined);
  const clear = (): void => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  };
  return { ended, expired: () => expired, clear };
}

/**
 * Opens a transaction with `open`, giving up when it has not started within `maxWaitMs` (no
 * pooled connection): rejects with a retriable FERRY_DATABASE_UNAVAILABLE, and a transaction
 * that starts later throws at once, so it rolls back and hands its connection back.
 */
export function startWithin<TTx, T>(
  maxWaitMs: number | undefined,
  open: (work: (tx: TTx) => Promise<T>) => Promise<T>,
  work: (tx: TTx) => Promise<T>,
): Promise<T> {
  if (maxWaitMs === undefined) return open(work);
  const late = () =>
    new FerryError('FERRY_DATABASE_UNAVAILABLE', `no connection for a transaction within ${maxWaitMs} ms`, {
      details: { maxWaitMs },
    });
  let state: 'waiting' | 'started' | 'abandoned' = 'waiting';
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (state !== 'waiting') return;
      state = 'abandoned';
      reject(late());
    }, maxWaitMs);
    open(async (tx) => {
      if (state === 'abandoned') throw late();
      state = 'started';
      clearTimeout(timer);
      return work(tx);
    })
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
}
