import { FerryError } from '../errors';
import type { SqlExecutor, TransactionOptions } from './executor';

/**
 * TransactionOptions for the clients that have no such options of their own (node-postgres,
 * Kysely); Prisma applies its own `timeout` and `maxWait`.
 */

/**
 * The select list that sets `timeoutMs` (parameter `$n`, e.g. '5000ms') as transaction-local
 * settings; a caller whose own first statement can carry it (see
 * TransactionAdapter.limitsAsSettings) saves the round trip of LIMIT.
 */
export function limitSettings(parameter: number): string {
  return `set_config('statement_timeout', $${parameter}, true) AS statement_timeout,
         set_config('idle_in_transaction_session_timeout', $${parameter}, true) AS idle_timeout`;
}

const LIMIT = `SELECT ${limitSettings(1)}`;

/** TransactionOptions.timeoutMs as the value limitSettings' parameter takes. */
export function limitValue(timeoutMs: number): string {
  return `${timeoutMs}ms`;
}

/**
 * `timeoutMs` as transaction-local settings, the first statement of the transaction: no
 * statement and no pause between statements may last longer, and PostgreSQL ends a session
 * left idle in the transaction (so a stuck caller cannot hold its locks past the deadline).
 */
export async function limitTransaction(tx: SqlExecutor, options: TransactionOptions): Promise<void> {
  if (options.timeoutMs !== undefined) await tx.query(LIMIT, [limitValue(options.timeoutMs)]);
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
