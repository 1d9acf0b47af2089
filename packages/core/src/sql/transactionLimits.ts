import { FerryError } from '../errors';
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
  if (options.timeoutMs !== undefined) await tx.query(LIMIT, [`${options.timeoutMs}ms`]);
}

/**
 * BEGIN and limitTransaction's settings in one simple-protocol string, one round trip, for a
 * client that sends its own BEGIN (node-postgres). Set before the first statement, the limits
 * bound it too: a setting made inside a statement does not bound that statement (a claim check
 * waiting behind a lock on its table would wait for as long as the lock is held). `timeoutMs`
 * is a finite number, inlined: its text holds no quote.
 */
export function beginLimited(options: TransactionOptions): string {
  const { timeoutMs } = options;
  if (timeoutMs === undefined) return 'BEGIN';
  if (!Number.isFinite(timeoutMs))
    throw new RangeError(`timeoutMs must be a finite number, got ${timeoutMs}`);
  return `BEGIN; ${LIMIT.replaceAll('$1', `'${timeoutMs}ms'`).trim()}`;
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
