import {
  type Pool,
  type ClientBase,
  type PoolClient,
  type PoolConfig,
  type QueryConfig,
  type QueryResult,
} from 'pg';
import { onAbort } from '../deadline';
import { methodsOption } from '../optionChecks';
import { askOutcomesElsewhere } from './commitOutcome';
import { FerryConfigError, FerryError, FerryValidationError } from '../errors';
import { closedReason, pendingStatements } from './clientQueue';
import { endablePool, releaseDestroyed } from './endConnection';
import type { SqlExecutor, StatementOptions, TransactionAdapter, TransactionOptions } from './executor';
import { inLentTransaction, lendClient } from './lentClient';
import { connectUnlessEnded } from './poolConnect';
import { answeredByServer } from './sqlState';
import { preparedName } from './statementNames';
import {
  beginLimited,
  checkedTimeout,
  identified,
  startWithin,
  transactionDeadline,
} from './transactionLimits';

/**
 * An executor over a node-postgres pool, for code that has no Prisma client: the CLI,
 * the migrator in scripts, a relay on its own pool, and ferry's own LISTEN connection. Counts
 * come back as the driver returns them (bigint as string), so cast in SQL (`::int`) where a
 * number is needed.
 *
 * Parameterized statements run as named prepared statements (parsed once per connection, and
 * planned generically once PostgreSQL finds that as good): ferry's statements are constant text.
 * Names come from statementNames.ts (at most 256 distinct texts per process); later texts, and
 * statements without parameters (which may hold several commands, e.g. a migration), run unnamed.
 */
export function fromPg(pool: Pool): SqlExecutor {
  return pooledExecutor(pgOption(pool), 'pool');
}

/** fromPg's and pgTransactions' `pool`: a node-postgres pool (or client), else FERRY_CONFIG_INVALID. */
function pgOption(pool: Pool): Pool {
  return methodsOption<Pool>('pool', pool, ['query'], 'a node-postgres Pool');
}

/**
 * pgTransactions' `pool`: a node-postgres Pool, else FERRY_CONFIG_INVALID. A single client (a
 * `Client`, a `PoolClient`) is refused before anything is sent on it: each handler transaction
 * checks a connection out of the pool, where a client fails with pg's untyped "Client has already
 * been connected"; and serialised on the one connection, the transactions would hold ferry's own
 * statements (a running handler's lease renewals) behind them, or take them in and roll them back.
 */
function transactionPoolOption(pool: Pool): Pool {
  if (isPool(pgOption(pool))) return pool;
  throw new FerryConfigError(
    'pool',
    'must be a node-postgres Pool, got a single client (a Client or PoolClient): each handler ' +
      "transaction takes a connection of the pool while ferry's own statements (claims, acceptance, " +
      "a running handler's lease renewals) run on others, which one connection cannot do; give " +
      'pgTransactions the Pool (fromPg, emit and the admins take a client)',
  );
}

/**
 * fromPg for a pool the application gave as `field` (emit's `tx`, an admin's `client`, the audit
 * log's `executor`): a pool ended already is refused (FERRY_VALIDATION_FAILED on `field`); one
 * ended later fails each call with FERRY_CLOSED naming `field` (openTarget).
 */
export function pooledExecutor(pool: Pool, field: string): SqlExecutor {
  refuseClosed(pool, isPool(pool), field);
  return bind(pool, false, field);
}

/**
 * ferry's executor on one client of the application (a `PoolClient`, a `Client`): inside the
 * client's open transaction (after its BEGIN) ferry's statements join it; on an idle client
 * (`getTransactionStatus()` 'I') ferry opens and commits a transaction of its own on it. A client
 * that cannot tell (pg's native bindings, pg releases without `getTransactionStatus()`) is
 * taken to be in a transaction.
 *
 * The status is PostgreSQL's answer to the client's last statement answered, so a client with
 * statements still sent or queued (a `client.query('BEGIN')` not awaited) cannot tell either: it
 * is refused (FERRY_VALIDATION_FAILED on `tx`), and so is a client not connected yet (no status
 * before its first answer); not the client a pgTransactions handler was lent (inLentTransaction),
 * which is in ferry's transaction until it is refused altogether. Taken for idle, ferry's BEGIN would follow the
 * application's and its COMMIT commit the application's transaction; taken for in a transaction,
 * ferry's writes would follow a queued COMMIT or ROLLBACK and commit on their own. While ferry
 * works on the client (until the call settles) the application sends nothing else on it: pg
 * runs one statement at a time, and a statement queued meanwhile runs inside ferry's transaction.
 */
export function fromPgClient(client: ClientBase, field = 'tx'): SqlExecutor {
  // A pgTransactions handler's client: inside ferry's transaction, statements pending or not.
  if (inLentTransaction(client)) return bind(client, true);
  refuseUnsettled(client, field);
  const executor = bind(client, transactionStatus(client) !== 'I');
  const params = (client as { connectionParameters?: ConnectionParameters }).connectionParameters;
  if (!executor.inTransaction && params !== undefined) {
    askOutcomesElsewhere(executor, (withinMs) => connectionLike(client, params, withinMs));
  }
  return executor;
}

/**
 * ferry's executor on one client of the application for an object that keeps it across calls (an
 * admin, the audit log), `wrap` (the object's deadlines, retries, translation) around it. The
 * application's BEGIN and COMMIT on the client come and go between calls, so whether ferry joins
 * its transaction or opens one of its own is decided at each statement and each transaction, from
 * the client's status then (fromPgClient, as emit decides at each call): decided once, a client
 * idle at construction and inside the application's BEGIN at a call got ferry's own BEGIN and
 * COMMIT, which committed the application's transaction (review 70). A client closed already is
 * refused at once; one not connected yet, or with statements not yet answered, at the call.
 * `inTransaction` is the client's status when read.
 */
export function perCallPgClient(
  client: ClientBase,
  field: string,
  wrap: (db: SqlExecutor) => SqlExecutor,
): SqlExecutor {
  refuseClosed(client, false, field);
  const now = (): SqlExecutor => {
    // Ended (or broken) after it was given: FERRY_CLOSED, as a pool ended later (openTarget).
    openTarget(client, field);
    return wrap(fromPgClient(client, field));
  };
  return {
    get inTransaction() {
      return transactionStatus(client) !== 'I';
    },
    query: async <T>(text: string, values?: readonly unknown[], options?: StatementOptions) =>
      now().query<T>(text, values, options),
    execute: async (text, values, options) => now().execute(text, values, options),
    transaction: async <T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions) =>
      now().transaction(work, options),
  };
}

/** The parts of pg's ConnectionParameters (a client's `connectionParameters`) read here. */
type ConnectionParameters = Record<string, unknown> & { readonly password?: unknown };

/**
 * Where the outcome of a COMMIT whose answer was lost is asked when the transaction ran on the
 * application's one client (withDeadlines' lostCommit): not on that client, whose queue waits
 * behind the COMMIT for an answer that may never come, but on a connection of its own with the
 * client's parameters and class (pg's native bindings stay native), opened for the question and
 * ended after it. Its statements are given up as a pool's (onPooledClient), it connects within
 * `withinMs` (connectionTimeoutMillis), and it is ended within CONNECTION_END_WAIT_MS (endablePool),
 * so a server silent at any step holds no socket of it afterwards, and nothing of the process.
 */
function connectionLike(
  client: ClientBase,
  params: ConnectionParameters,
  withinMs: number,
): { db: SqlExecutor; close(): void } {
  const { pool, end } = endablePool({
    ...params,
    password: params.password as PoolConfig['password'], // pg keeps it out of the enumerable fields
    Client: client.constructor as NonNullable<PoolConfig['Client']>,
    max: 1,
    connectionTimeoutMillis: withinMs,
  });
  return { db: fromPg(pool), close: () => void end() };
}

/**
 * Refuses a client whose transaction status is not known yet: statements not yet answered, or
 * not connected yet (pg reports no status before its first ReadyForQuery).
 */
function refuseUnsettled(client: ClientBase, field: string): void {
  refuseClosed(client, false, field);
  if (transactionStatus(client) === null) {
    throw new FerryValidationError(
      field,
      'a node-postgres client not connected yet (its connect() not awaited): ferry cannot tell whether ' +
        'the client is in a transaction; await client.connect() first',
    );
  }
  const pending = pendingStatements(client);
  if (pending === null || pending === 0) return;
  throw new FerryValidationError(
    field,
    `a node-postgres client with ${pending} statement(s) not yet answered (a query not awaited, such ` +
      'as its BEGIN): ferry cannot tell whether the client is in a transaction; await them first',
  );
}

/**
 * Refuses a client or pool that can never answer again: every call would fail the same way, so a
 * retriable database error would send a caller's retry loop round for ever.
 */
function refuseClosed(target: object, isPool: boolean, field: string): void {
  const reason = closedReason(target, isPool);
  if (reason !== null) {
    throw new FerryValidationError(field, `${reason}: it cannot run statements any more; use a new one`);
  }
}

/**
 * A pool or client the application ended after ferry was given it (a shutdown that ends it before
 * the relay, the inbox, an admin or a consumer stops; a client a connection error broke) fails
 * each call with FERRY_CLOSED, naming `field`: not retriable (no call will ever succeed), and a
 * failure of the whole batch to a transport's acceptance (isBatchWideFailure), never one message's
 * fault. pg's own "Cannot use a pool after calling end on the pool" and "Client was closed and is
 * not queryable" are translated the same way (dbErrors.ts), for Kysely and Prisma.
 */
function openTarget(target: Queryable, field: string): void {
  const reason = closedReason(target, isPool(target));
  if (reason !== null) throw closedError(reason, field);
}

function closedError(reason: string, field: string): FerryError {
  return new FerryError(
    'FERRY_CLOSED',
    `${field}: ${reason}: it cannot run statements any more; use a new one`,
    {
      details: { field },
    },
  );
}

/** A connection of the application's `pool` (given as `field`); FERRY_CLOSED once it is ended. */
function connectionOf(pool: Pool, field: string): Promise<PoolClient> {
  return connectUnlessEnded(pool, () => closedError('a node-postgres pool that was ended', field));
}

/**
 * The transaction adapter of a node-postgres pool: ferry's statements on `fromPg(pool)`, and
 * transactions on a connection of the pool that the handler gets as a `PoolClient` (lendClient:
 * its `release()` and any use after the transaction are refused with FERRY_TRANSACTION_MISUSE).
 * A single client is refused (transactionPoolOption).
 */
export function pgTransactions(pool: Pool): TransactionAdapter<PoolClient> {
  transactionPoolOption(pool);
  const connections = poolSize((pool as { options?: { max?: unknown } }).options?.max);
  return {
    db: fromPg(pool),
    transaction: (work, options = {}) => {
      try {
        openTarget(pool, 'pool');
      } catch (error) {
        return Promise.reject(error);
      }
      return onConnection(pool, 'pool', work, options);
    },
    bind: (client) => bind(client, true),
    ...(connections === undefined ? {} : { connections }),
  };
}

/**
 * The pool's size as pg-pool uses it: it compares its client count with `max` as given, so a
 * string from an environment variable ("2") is that number. Undefined when it is no positive
 * integer (no size to warn by).
 */
function poolSize(max: unknown): number | undefined {
  const size = typeof max === 'string' && max.trim() !== '' ? Number(max) : max;
  return typeof size === 'number' && Number.isInteger(size) && size > 0 ? size : undefined;
}

type Queryable = Pool | ClientBase;

/** The statement to send: named (prepared) when it has parameters and the budget allows. */
function statement(text: string, values: unknown[]): QueryConfig {
  if (values.length === 0) return { text };
  const name = preparedName(text);
  return name === undefined ? { text, values } : { name, text, values };
}

/**
 * `field`: the argument that carried `target`, the application's pool or client (fromPg,
 * pgTransactions, an admin's or the audit log's, emit's); each call on it checks it is still
 * open (openTarget). Without one, `target` is a connection ferry took or was lent for one
 * transaction: a connection error there is the database's (UNAVAILABLE), the pool has others.
 */
function bind(target: Queryable, inTransaction: boolean, field?: string): SqlExecutor {
  const run = (text: string, values: readonly unknown[], options: StatementOptions | undefined) => {
    if (field !== undefined) openTarget(target, field);
    const config = statement(text, [...values]);
    if (isPool(target)) return onPooledClient(target, field ?? 'pool', config, options ?? {});
    // One connection: no wait for a pooled one (StatementOptions.onConnecting).
    if (!isPool(target)) options?.onConnecting?.(false);
    return target.query(config);
  };
  const executor: SqlExecutor = {
    inTransaction,
    async query<T>(text: string, values: readonly unknown[] = [], options?: StatementOptions) {
      return (await run(text, values, options)).rows as T[];
    },
    async execute(text: string, values: readonly unknown[] = [], options?: StatementOptions) {
      return (await run(text, values, options)).rowCount ?? 0;
    },
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}) {
      if (inTransaction) return work(executor);
      if (field !== undefined) openTarget(target, field);
      if (isPool(target)) {
        return onConnection(target, field ?? 'pool', (client) => work(bind(client, true)), options);
      }
      return onClient(target, work, options);
    },
  };
  return executor;
}

/**
 * One statement on a connection of `pool` (pool.query's steps, but a wait for the connection fails
 * once the pool is ended: connectionOf), that ferry may give up on (`signal`): the connection is
 * then destroyed, not returned to the pool (its answer may still come, or never), and the pool
 * opens a new one when it needs it. A connection that comes too late is handed straight back. As
 * pool.query does, the connection's `error` event (reset, terminated) is handled while it is
 * checked out, and a connection whose statement failed is destroyed. `onBackend` is told the
 * backend of a connection given up with its statement unanswered (StatementOptions).
 */
async function onPooledClient(
  pool: Pool,
  field: string,
  config: QueryConfig,
  { signal, onBackend, onConnecting }: StatementOptions,
): Promise<QueryResult> {
  onConnecting?.(true);
  let client: PoolClient;
  try {
    client = await connectionOf(pool, field);
  } finally {
    onConnecting?.(false);
  }
  if (signal?.aborted) {
    client.release();
    throw signal.reason;
  }
  const pid = (client as { processID?: unknown }).processID;
  const sentAt = performance.now();
  const unanswered = (): void => {
    if (onBackend && typeof pid === 'number') onBackend({ pid, sentAt });
  };
  const connection = watchConnection(client);
  let destroyed = false;
  const destroy = (): void => {
    destroyed = true;
    unanswered();
    releaseDestroyed(client, new Error('ferry stopped waiting for a statement on this connection'));
  };
  signal?.addEventListener('abort', destroy, { once: true });
  let failed = false;
  try {
    return await Promise.race([client.query(config), connection.lost]);
  } catch (error) {
    failed = true;
    if (!destroyed && !answeredByServer(error)) unanswered();
    throw error;
  } finally {
    signal?.removeEventListener('abort', destroy);
    connection.stop();
    // A connection being destroyed may still report its backend's end (ferry may end that backend:
    // outbox/abandonedClaims.ts); nobody listens to it any more, so that is not an unhandled error.
    if (destroyed || failed || connection.failed()) client.on('error', () => undefined);
    // As pool.query does: a connection whose statement failed is not reused.
    if (!destroyed && (failed || connection.failed())) releaseDestroyed(client);
    else if (!destroyed) client.release();
  }
}

/**
 * A transaction on a connection of `pool`, released afterwards (destroyed if left in a
 * transaction, lost, or without its prepared statements). While it is checked out, the connection's `error` event (PostgreSQL ended
 * the session: idle-in-transaction timeout, pg_terminate_backend, a failover) is ferry's to
 * handle, not an unhandled error that ends the process: the transaction fails at once with it,
 * even while `work` waits for something else, and the connection is destroyed.
 *
 * `timeoutMs` bounds the whole transaction, as Prisma's `timeout` does: the settings beginLimited
 * sends bound each statement and each pause, but not a caller that keeps the transaction busy with
 * short statements. If it has not asked to commit by then (plus DEADLINE_GRACE_MS, so that a
 * statement PostgreSQL's own limit cancels fails with PostgreSQL's error, not this one), the
 * transaction fails with FERRY_TIMEOUT and the connection is closed, so PostgreSQL rolls it back
 * and its locks go with it; `work`'s later statements are refused (lendClient). An aborted
 * `options.signal` (the caller gave up on the transaction) does the same at once.
 */
function onConnection<T>(
  pool: Pool,
  field: string,
  work: (client: PoolClient) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  try {
    // Checked before a connection is taken (a refused value never holds one).
    checkedTimeout(options.timeoutMs);
  } catch (error) {
    return Promise.reject(error);
  }
  const open = async (inner: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await connectionOf(pool, field);
    const connection = watchConnection(client);
    const lent = lendClient(client);
    const progress = { committing: false };
    const deadline = transactionDeadline(options, progress);
    let failure: unknown;
    try {
      const transaction = inBlock(client, () => inner(lent.client).finally(lent.end), options, progress);
      // Once the connection is lost or the deadline passed, nothing waits for `work` any more.
      transaction.catch(() => undefined);
      return await Promise.race([transaction, connection.lost, deadline.ended]);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      deadline.clear();
      lent.end();
      connection.stop();
      // Whatever the reading costs, the connection goes back (destroyed when in doubt).
      let destroy = true;
      try {
        const status = transactionStatus(client);
        destroy =
          deadline.expired() ||
          connection.failed() ||
          status === 'T' ||
          status === 'E' ||
          lostStatements(failure);
      } finally {
        if (destroy) releaseDestroyed(client);
        else client.release();
      }
    }
  };
  return startWithin(options, open, work);
}

/**
 * A transaction on the application's one client (fromPgClient on an idle client). The client is
 * not ferry's to close, as a pool's connection is when its transaction is given up
 * (`options.signal`: withDeadlines' whole-transaction deadline, whose caller then hears a
 * retriable FERRY_TIMEOUT, nothing committed). So the transaction is rolled back instead: ROLLBACK
 * is queued at once (behind a statement still running), the statements `work` sends afterwards
 * are refused with the signal's reason, and no COMMIT follows (inBlock). A COMMIT sent before the
 * signal aborted is not undone: its outcome is PostgreSQL's (withDeadlines asks).
 */
function onClient<T>(
  client: ClientBase,
  work: (tx: SqlExecutor) => Promise<T>,
  options: TransactionOptions,
): Promise<T> {
  const { signal } = options;
  const tx = bind(client, true);
  if (signal === undefined) return inBlock(client, () => work(tx), options);
  if (signal.aborted) return Promise.reject(signal.reason as unknown);
  const open = <R>(send: () => Promise<R>): Promise<R> =>
    signal.aborted ? Promise.reject(signal.reason as unknown) : send();
  const guarded: SqlExecutor = {
    inTransaction: true,
    query: (text, values, statement) => open(() => tx.query(text, values, statement)),
    execute: (text, values, statement) => open(() => tx.execute(text, values, statement)),
    transaction: (inner) => inner(guarded),
  };
  const unlisten = onAbort(signal, () => void client.query('ROLLBACK').catch(() => undefined));
  return inBlock(client, () => work(guarded), options).finally(unlisten);
}

/**
 * SQLSTATE 26000: PostgreSQL no longer has a statement the driver prepared on this connection
 * (DISCARD ALL or DEALLOCATE behind the driver's back). The driver still takes it for prepared and
 * would send it unparsed on every later use, so the connection is destroyed, not reused.
 */
function lostStatements(error: unknown): boolean {
  try {
    return (error as { code?: unknown } | undefined)?.code === '26000';
  } catch {
    // A thrown value whose properties cannot be read (a hostile Proxy, a throwing getter): it
    // names no lost statement, and reading it must never keep the connection from going back
    // to the pool (review 40: each such throw leaked one, until the pool was exhausted).
    return false;
  }
}

/** Rejects `lost` with the connection's first `error` event until stop(). */
function watchConnection(client: ClientBase): {
  lost: Promise<never>;
  failed(): boolean;
  stop(): void;
} {
  let failed = false;
  let onError: (error: Error) => void = () => undefined;
  const lost = new Promise<never>((_, reject) => {
    onError = (error) => {
      failed = true;
      reject(error);
    };
  });
  client.on('error', onError);
  return { lost, failed: () => failed, stop: () => void client.removeListener('error', onError) };
}

/**
 * BEGIN … COMMIT on `client`, ROLLBACK when `work` throws. A COMMIT that PostgreSQL answers
 * with ROLLBACK (a statement failed and the caller went on) throws: nothing was committed.
 */
async function inBlock<T>(
  client: ClientBase,
  work: () => Promise<T>,
  options: TransactionOptions,
  progress: { committing: boolean } = { committing: false },
): Promise<T> {
  try {
    const begun: QueryResult | QueryResult[] = await client.query(beginLimited(options));
    identified(options, [begun].flat().at(-1)?.rows[0]);
    const result = await work();
    // Given up meanwhile (onClient, onConnection): the caller was told nothing was committed.
    if (options.signal?.aborted) throw options.signal.reason;
    progress.committing = true;
    const commit = await client.query('COMMIT');
    if (commit.command !== 'COMMIT') {
      throw new FerryError(
        'FERRY_DATABASE_ERROR',
        'the transaction was aborted by a failed statement and rolled back',
      );
    }
    return result;
  } catch (error) {
    if (transactionStatus(client) !== 'I') await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

function isPool(target: Queryable): target is Pool {
  return typeof (target as Pool).totalCount === 'number';
}

/**
 * 'I' idle, 'T' in a transaction, 'E' in a failed one; null when not known yet (pg before the
 * connection's first answer); undefined when the client cannot tell (no getTransactionStatus).
 */
function transactionStatus(client: ClientBase): string | null | undefined {
  const read = (client as Partial<Pick<ClientBase, 'getTransactionStatus'>>).getTransactionStatus;
  return typeof read === 'function' ? (read.call(client) as string | null) : undefined;
}
