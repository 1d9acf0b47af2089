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
 * transaction by abandoning `work`: ferry first takes the transaction's connection for itself
 * (holdConnection, once no statement of `work` runs on it: statement_timeout bounds one that
 * does), then the callback Kysely awaits fails, so Kysely rolls back and hands the connection back
 * to the pool (one PostgreSQL already ended is dropped by the pool). Only then does ferry let go,
 * and the statements `work` sent meanwhile are refused by the Transaction, which is rolled back by
 * then; without the hold, one sent while the ROLLBACK was in flight ran after it, outside the
 * transaction, and committed.
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
  const open = (inner: (trx: Transaction<DB>) => Promise<T>) => {
    let letGo: (() => void) | undefined;
    const transaction = db.transaction().execute(async (trx) => {
      const deadline = transactionDeadline(options, { committing: false });
      try {
        const running = (async () => {
          await limitTransaction(fromKysely(trx), options);
          return inner(trx);
        })();
        // Once the transaction is abandoned, nothing waits for `work` any more.
        running.catch(() => undefined);
        const abandoned = deadline.ended.catch(async (reason: unknown) => {
          letGo = await holdConnection(trx);
          throw reason;
        });
        return await Promise.race([running, abandoned]);
      } finally {
        deadline.clear();
      }
    });
    return transaction.finally(() => letGo?.());
  };
  return startWithin(options.maxWaitMs, open, work);
}

/**
 * Takes `trx`'s connection for ferry alone: Kysely runs a transaction's statements one at a time
 * on its connection, so this waits for the statement running on it, and every later one waits
 * until the returned function lets go (each then checks that the transaction is still open).
 */
function holdConnection<DB>(trx: Transaction<DB>): Promise<() => void> {
  return new Promise((resolve, reject) => {
    trx
      .getExecutor()
      .provideConnection(() => new Promise<void>((release) => resolve(release)))
      .catch(reject);
  });
}
