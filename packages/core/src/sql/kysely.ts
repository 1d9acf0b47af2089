import type * as KyselyModule from 'kysely';
import type { DatabaseConnection, Kysely, QueryExecutor, Transaction } from 'kysely';
import { FerryConfigError } from '../errors';
import { methodsOption } from '../optionChecks';
import { optionalPeerError } from '../optionalPeer';
import { KYSELY_METHODS } from './kyselyShape';
import { settlesWithin } from '../outbox/settle';
import type {
  KyselyLike,
  SqlExecutor,
  StatementOptions,
  TransactionAdapter,
  TransactionOptions,
} from './executor';
import { withStatementDeadline } from './statementDeadline';
import {
  ABANDONED_END_MS,
  abandonedNotEnded,
  checkedTimeout,
  limitTransaction,
  startWithin,
  transactionDeadline,
  type TransactionBackend,
} from './transactionLimits';

/**
 * Kysely (an optional peer dependency, loaded only by `@ferry/core/kysely` and by an emit given a
 * Kysely object). ferry's parameterized text runs as Kysely's raw compiled queries
 * (`CompiledQuery.raw`), on the instance's pool or, for a transaction, on its connection, through
 * the instance's executor without its plugins (`withoutPlugins()`): a plugin neither rewrites
 * ferry's statements nor transforms its rows (CamelCasePlugin would turn `retry_count` into
 * `retryCount`, review 68).
 *
 * The public signatures describe Kysely by shape (KyselyLike, KyselyInstanceLike) and name none of
 * its types: this package's declarations are CommonJS, so an import of kysely's types in them
 * resolves kysely's CommonJS declarations, while an ES-module application gets its ES-module
 * ones, two distinct `Kysely` classes (private fields) that do not accept each other. The
 * application's own `Kysely<DB>` is taken as the type parameter, so its table types reach `tx`.
 */

/** kysely's runtime, loaded with this module: a missing install is a FerryConfigError saying how to add it. */
const { CompiledQuery } = ((): Pick<typeof KyselyModule, 'CompiledQuery'> => {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('kysely') as Pick<typeof KyselyModule, 'CompiledQuery'>;
  } catch (error) {
    throw optionalPeerError(error, {
      peer: 'kysely',
      option: '@ferry/core/kysely',
      reason: 'needs the optional peer dependency kysely (>=0.28.0 <0.30.0): npm install kysely@^0.28.0',
    });
  }
})();

/** A Kysely instance by shape: KyselyLike with the `transaction()` builder ferry opens transactions with. */
export interface KyselyInstanceLike extends KyselyLike {
  transaction(): { execute(work: (trx: unknown) => Promise<unknown>): Promise<unknown> };
}

/** The `Transaction` a Kysely instance `K` hands `transaction().execute`'s callback (`Transaction<DB>`). */
export type KyselyTransactionOf<K extends KyselyInstanceLike> =
  ReturnType<K['transaction']> extends {
    execute(work: (trx: infer T) => Promise<unknown>): Promise<unknown>;
  }
    ? T
    : never;

/**
 * ferry's executor on a Kysely instance (its own transactions) or a `Transaction` (joins it). Anything
 * else (undefined from a configuration loader) is refused with FERRY_CONFIG_INVALID on `db`.
 */
export function fromKysely(kysely: KyselyLike): SqlExecutor {
  methodsOption('db', kysely, KYSELY_METHODS, 'a Kysely instance or Transaction');
  // The one place the shape is taken for kysely's class (the application's, of either module system).
  const db = kysely as unknown as Kysely<unknown>;
  const run = <R>(text: string, values: readonly unknown[], options: StatementOptions = {}) => {
    const query = CompiledQuery.raw(text, [...values]);
    // The same connection provider (a Transaction's connection), none of the plugins.
    const plain = db.getExecutor().withoutPlugins();
    if (db.isTransaction || (!options.signal && !options.onConnecting)) return plain.executeQuery<R>(query);
    return observingConnection(plain, options).executeQuery<R>(query);
  };
  const executor: SqlExecutor = {
    inTransaction: db.isTransaction,
    async query<T>(text: string, values: readonly unknown[] = [], options?: StatementOptions) {
      return (await run<T>(text, values, options)).rows;
    },
    async execute(text: string, values: readonly unknown[] = [], options?: StatementOptions) {
      const result = await run(text, values, options);
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
 * `executor` (the instance's, without plugins), telling `onConnecting` when the statement waits
 * for a connection of the instance's pool and when it has one, so a deadline that passes meanwhile
 * is FERRY_DATABASE_UNAVAILABLE (withStatementDeadline). A connection that comes once `signal`
 * aborted (the deadline passed) is handed straight back, the statement unsent. Kysely keeps the
 * connection itself: one whose statement is given up on is not closed (the driver's timeouts end
 * it), unlike fromPg's.
 */
function observingConnection(
  executor: QueryExecutor,
  { signal, onConnecting }: StatementOptions,
): QueryExecutor {
  return executor.withConnectionProvider({
    async provideConnection<T>(consume: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
      onConnecting?.(true);
      let waiting = true;
      try {
        return await executor.provideConnection(async (connection) => {
          waiting = false;
          onConnecting?.(false);
          if (signal?.aborted) throw signal.reason;
          return consume(connection);
        });
      } finally {
        if (waiting) onConnecting?.(false);
      }
    },
  });
}

/**
 * The transaction adapter of a Kysely instance (PostgresDialect): ferry's statements on `db`, and
 * transactions (`db.transaction().execute`) that the handler gets as a Kysely `Transaction<DB>`.
 * Anything but an instance is refused with FERRY_CONFIG_INVALID on `db`, a `Transaction` too, before
 * anything is sent on it (as pgTransactions refuses a single client): ferry's own statements would
 * run inside the application's transaction, and Kysely opens no transaction in one.
 */
export function kyselyTransactions<K extends KyselyInstanceLike>(
  kysely: K,
): TransactionAdapter<KyselyTransactionOf<K>> {
  methodsOption('db', kysely, [...KYSELY_METHODS, 'transaction'], 'a Kysely instance');
  if (kysely.isTransaction) {
    throw new FerryConfigError(
      'db',
      "must be a Kysely instance, got a Kysely Transaction: each handler transaction is a transaction of the instance, while ferry's own statements (claims, acceptance, lease renewals) run beside it on the instance's pool; give kyselyTransactions the instance (fromKysely and emit take a Transaction)",
    );
  }
  const db = kysely as unknown as Kysely<unknown>;
  return {
    db: fromKysely(kysely),
    transaction: (work, options = {}) =>
      openTransaction(db, work as (trx: Transaction<unknown>) => Promise<never>, options),
    bind: (trx) => fromKysely(trx as KyselyLike),
  };
}

/**
 * `db.transaction().execute` with TransactionOptions applied (transactionLimits). Kysely keeps the
 * connection to itself, so the whole-transaction deadline (and `options.signal`) ends the
 * transaction by abandoning `work`: ferry first takes the transaction's connection for itself
 * (holdConnection, once no statement of `work` runs on it: a statement still running is cancelled,
 * cancelStatement), then the callback Kysely awaits fails, so Kysely rolls back and hands the
 * connection back to the pool (one PostgreSQL already ended is dropped by the pool). Only then does
 * ferry let go, and the statements `work` sent meanwhile are refused by the Transaction, which is
 * rolled back by then; without the hold, one sent while the ROLLBACK was in flight ran after it,
 * outside the transaction, and committed. An abandoned transaction fails with the deadline's
 * error (or the signal's reason), or with FERRY_TIMEOUT when it has not ended within
 * ABANDONED_END_MS (a silent connection: its ROLLBACK never answered); ferry keeps its hold then,
 * and the connection stays checked out until the driver gives up on it (the pool's query_timeout).
 * A signal aborted before the start runs nothing.
 *
 * Work that ends by itself is held the same way: once `work` settles, ferry takes the connection
 * (after the statement still running on it) before Kysely sends its COMMIT or ROLLBACK, which
 * Kysely sends straight on the connection while the Transaction still counts as open until they
 * answer. A statement a branch of `work` still running sends meanwhile (Promise.all rejected at
 * its first failure while another branch went on) then waits for the hold and is refused by the
 * ended Transaction; without it, it went to the connection after the ROLLBACK, ran outside the
 * transaction and committed on its own (review 90).
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
  const open = (inner: (trx: Transaction<DB>) => Promise<T>): Promise<T> => {
    // One hold of the connection, whoever takes it first: the work ending, or its abandonment.
    let holding: Promise<() => void> | undefined;
    let given: { readonly reason: unknown } | undefined;
    let abandon: () => void = () => undefined;
    const abandoned = new Promise<void>((resolve) => (abandon = resolve));
    let builder = db.transaction();
    if (options.isolation === 'read committed') {
      builder = builder.setIsolationLevel('read committed');
      // setAccessMode came in a later Kysely than the oldest ferry takes.
      if (typeof builder.setAccessMode === 'function') builder = builder.setAccessMode('read write');
    }
    const transaction = builder.execute(async (trx) => {
      const hold = (): Promise<() => void> => (holding ??= holdConnection(trx));
      const deadline = transactionDeadline(options, { committing: false });
      let backend: TransactionBackend | undefined;
      try {
        const running = (async () => {
          backend = await limitTransaction(fromKysely(trx), options);
          // Ended during the first statement: the work never starts.
          if (deadline.expired()) return deadline.ended;
          return inner(trx);
        })();
        // Once the transaction is abandoned, nothing waits for `work` any more.
        running.catch(() => undefined);
        const ending = deadline.ended.catch(async (reason: unknown) => {
          given = { reason };
          abandon();
          await takeConnection(db, hold, backend);
          throw reason;
        });
        // Once abandoned, only `ending` settles the callback: work that finishes meanwhile (while
        // ferry waits for the hold or the cancel) must not commit. Settled by itself, the work
        // ends with the connection held (see above).
        const outcome = running.then(
          async (value) => {
            if (!deadline.expired()) await heldOrNot(hold());
            return deadline.expired() ? ending : value;
          },
          async (error: unknown) => {
            if (!deadline.expired()) await heldOrNot(hold());
            if (deadline.expired()) return ending;
            throw error;
          },
        );
        return await Promise.race([outcome, ending]);
      } finally {
        deadline.clear();
      }
    });
    // Abandoned, it fails with the reason, also when Kysely's ROLLBACK failed (the connection is then dropped).
    const ended = transaction
      .finally(
        () =>
          void holding?.then(
            (letGo) => letGo(),
            () => undefined,
          ),
      )
      .catch((error: unknown) => {
        throw given ? given.reason : error;
      });
    return Promise.race([ended, abandoned.then(() => endedWithin(ended))]);
  };
  return startWithin(options, open, work);
}

/** Waits for the hold; one Kysely refused leaves the transaction's end as it was (nothing held). */
async function heldOrNot(holding: Promise<() => void>): Promise<void> {
  await holding.catch(() => undefined);
}

/** An abandoned `transaction`, or FERRY_TIMEOUT once it has not ended within ABANDONED_END_MS. */
async function endedWithin<T>(transaction: Promise<T>): Promise<T> {
  if (await settlesWithin(transaction, ABANDONED_END_MS)) return transaction;
  throw abandonedNotEnded();
}

/**
 * holdConnection, and the statement `work` runs on the connection cancelled (`backend`, as the
 * first statement read it) rather than waited for: the hold then comes once it failed. The cancel
 * is sent on another connection of the pool, bounded by ABANDONED_END_MS; while it cannot be sent
 * the statement is left to its statement_timeout.
 */
async function takeConnection<DB>(
  db: Kysely<DB>,
  hold: () => Promise<() => void>,
  backend: TransactionBackend | undefined,
): Promise<() => void> {
  const holding = hold();
  const idle = await Promise.race([
    holding.then(() => true),
    new Promise<false>((r) => setImmediate(r, false)),
  ]);
  if (!idle && backend !== undefined) {
    const cancel = withStatementDeadline(fromKysely(db), ABANDONED_END_MS).query(CANCEL, [
      backend.pid,
      backend.startedUs,
    ]);
    // A statement that ends first (the pool had no connection for the cancel yet) is not waited
    // for twice: the cancel, sent late, reaches this transaction (its ROLLBACK then fails, and
    // Kysely drops the connection) or nothing.
    await Promise.race([cancel.catch(() => undefined), holding]);
  }
  return holding;
}

/**
 * Cancels the statement of the transaction that started at $2 on backend $1, and nothing else: a
 * cancel sent late (it waited for a pooled connection) finds that transaction ended and the
 * backend, if it still exists, in another transaction, or finds itself on that very connection.
 * pg_cancel_backend is called in the select list of the one row pg_stat_get_activity($1) returns,
 * never in a WHERE clause, where the planner may run it before `pid = $1`.
 */
const CANCEL = `
  SELECT coalesce((
    SELECT pg_cancel_backend(a.pid)
    FROM pg_stat_get_activity($1::int) a
    WHERE a.pid = $1::int AND a.pid <> pg_backend_pid()
      AND (extract(epoch FROM a.xact_start) * 1000000)::bigint = $2::bigint
  ), false) AS cancelled`;

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
