import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { SqlExecutor, TransactionAdapter, TransactionOptions } from './executor';
import { checkedTimeout, limitTransaction, startWithin, transactionDeadline } from './transactionLimits';

/**
 * Kysely (an optional peer dependency, loaded only by `@ferry/core/kysely` and by an emit given a
 * Kysely object). ferry's parameterized text runs as Kysely's raw compiled queries
 * (`CompiledQuery.raw`), on the instance's pool or, for a transaction, on its connection; its
 * plugins do not rewrite ferry's statements.
 */

/** ferry's executor on a Kysely instance (its own transactions) or a `Transaction` (joins it). */
export function fromKysely<DB>(db: Kysely<DB>): SqlExecutor {
  const run = <R>(text: string, values: readonly unknown[]) =>
    db.executeQuery<R>(CompiledQuery.raw(text, [...values]));
  const executor: SqlExecutor = {
    inTransaction: db.isTransaction,
    async query<T>(text: string, values: readonly unknown[] = []) {
      return (await run<T>(text, values)).rows;
    },
    async execute(text: string, values: readonly unknown[] = []) {
      const result = await run(text, values);
      // Kysely counts INSERT / UPDATE / DELETE / MERGE; node-postgres counts a SELECT's rows.
      return Number(result.numAffectedRows ?? result.rows.length);
    },
    transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}) {
      if (db.isTransaction) return work(executor);
      return openTransaction(db, (trx) => work(fromKysely(trx)), options);
    },
  };
  return executor;
}

/**
 * The transaction adapter of a Kysely instance (PostgresDialect): ferry's statements on `db`, and
 * transactions (`db.transaction().execute`) that the handler gets as a Kysely `Transaction<DB>`.
 */
export function kyselyTransactions<DB>(db: Kysely<DB>): TransactionAdapter<Transaction<DB>> {
  return {
    db: fromKysely(db),
    transaction: (work, options = {}) => openTransaction(db, work, options),
    bind: (trx) => fromKysely(trx),
  };
}

/**
 * `db.transaction().execute` with TransactionOptions applied (transactionLimits). Kysely keeps the
 * connection to itself, so the whole-transaction deadline (and `options.signal`) ends the
 * transaction by abandoning `work`: the callback Kysely awaits fails at once, Kysely rolls back and
 * hands the connection back to the pool (a connection PostgreSQL already ended is dropped by the
 * pool), and the Transaction then refuses the work's later statements itself. A statement still
 * running on the connection holds the rollback back until it ends (statement_timeout bounds it).
 */
function openTransaction<DB, T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  try {
    // Checked before a connection is taken (a refused value never holds one).
    checkedTimeout(options.timeoutMs);
  } catch (error) {
    return Promise.reject(error);
  }
  const open = (inner: (trx: Transaction<DB>) => Promise<T>) =>
    db.transaction().execute(async (trx) => {
      const deadline = transactionDeadline(options, { committing: false });
      try {
        const running = (async () => {
          await limitTransaction(fromKysely(trx), options);
          return inner(trx);
        })();
        // Once the deadline passed, nothing waits for `work` any more.
        running.catch(() => undefined);
        return await Promise.race([running, deadline.ended]);
      } finally {
        deadline.clear();
      }
    });
  return startWithin(options.maxWaitMs, open, work);
}
