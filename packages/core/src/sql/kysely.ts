import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { SqlExecutor, TransactionAdapter, TransactionOptions } from './executor';
import { limitTransaction, startWithin } from './transactionLimits';

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

/** `db.transaction().execute` with TransactionOptions applied (transactionLimits). */
function openTransaction<DB, T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  const open = (inner: (trx: Transaction<DB>) => Promise<T>) =>
    db.transaction().execute(async (trx) => {
      await limitTransaction(fromKysely(trx), options);
      return inner(trx);
    });
  return startWithin(options.maxWaitMs, open, work);
}
