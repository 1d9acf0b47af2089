/**
 * The one seam between ferry and PostgreSQL. ferry's SQL is always parameterized text
 * ($1, $2, ...) with values bound by the driver; nothing is built from input.
 *
 * `fromPrisma` adapts the application's Prisma client (or one of its interactive
 * transaction clients): work passed a transaction joins the caller's transaction.
 * `TransactionAdapter` (below) is the other half: the application's own transactions.
 */
import { executorOption, methodsOption } from '../optionChecks';
import { sqlStateOf } from './sqlState';
import { preparedLost, preparedName } from './statementNames';

export interface TransactionOptions {
  /**
   * Milliseconds the transaction may run: Prisma's `timeout`; on node-postgres and Kysely,
   * the transaction-local statement_timeout and idle_in_transaction_session_timeout, and on
   * node-postgres the whole transaction too (its connection closed past the deadline, fromPg.ts).
   * An integer from 0 (no limit) to 2,147,483,647 (PostgreSQL's maximum), else FERRY_CONFIG_INVALID.
   */
  timeoutMs?: number;
  /** Milliseconds to wait for a pooled connection before giving up (Prisma `maxWait`). */
  maxWaitMs?: number;
  /**
   * Aborts when the caller gives up on the transaction (the inbox worker: a heartbeat interval
   * past `transactionTimeoutMs`, or close() past `shutdownTimeoutMs`; withDeadlines past its
   * whole-transaction deadline): on node-postgres the
   * transaction fails with the signal's reason and its connection is closed, even while it
   * commits (its outcome is then unknown); on Kysely the transaction's work is abandoned (a
   * statement still running is cancelled), so Kysely rolls it back and releases the connection,
   * and the transaction fails with FERRY_TIMEOUT when that has not happened within 5 s
   * (ABANDONED_END_MS). Aborted already, the transaction takes no connection and runs nothing.
   * Prisma cannot be told: its own `timeout` ends the transaction.
   */
  signal?: AbortSignal;
  /**
   * `'read committed'`: the transaction runs at READ COMMITTED whatever the database's or the
   * connection's default (`default_transaction_isolation`), and READ WRITE where the client can
   * say so (`default_transaction_read_only`): Prisma's `isolationLevel` (no access mode),
   * node-postgres's `BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE`, Kysely's
   * `setIsolationLevel` and `setAccessMode`. The
   * inbox worker asks for it when a handler transaction found another level: its fenced
   * completion updates the receipt row that its lease renewals update meanwhile, which REPEATABLE
   * READ and SERIALIZABLE refuse (40001). Unset: the default, and no extra statement.
   */
  isolation?: 'read committed';
}

/**
 * How one statement may be given up. `signal` aborts when ferry stops waiting for it
 * (statementDeadline.ts): an executor that owns the connection (fromPg on a pool) then destroys
 * it instead of returning it to the pool in an unknown state; others ignore it. It also aborts
 * once the statement has settled (that clears its deadline), so an executor stops listening to it
 * when its statement settles.
 */
export interface StatementOptions {
  readonly signal?: AbortSignal;
  /**
   * Told, by an executor that gives a connection up with its statement (fromPg on a pool), the
   * backend that may still run a statement PostgreSQL did not answer (its deadline passed, or the
   * connection failed under it): its process id, and `sentAt`, performance.now() when the statement
   * was sent. Whoever dropped the statement may end that backend to be sure it no longer runs.
   */
  readonly onBackend?: (backend: { pid: number; sentAt: number }) => void;
  /**
   * Called when the statement's deadline gives it up (withStatementDeadline), with `ended`: true
   * once the statement can no longer take effect (PostgreSQL answered it, or it was never sent),
   * false once it failed without PostgreSQL's answer (the connection was lost or destroyed: it may
   * still run, and commit, on the server). `answer`: the statement's own outcome, whenever it
   * comes (its rows or row count, or its failure), for a caller that still wants a late answer
   * (the lease kit's renewals: lease/renewalLock.ts).
   */
  readonly onAbandoned?: (ended: Promise<boolean>, answer: Promise<unknown>) => void;
  /**
   * Told by an executor that knows when it has the statement's connection (fromPg, Kysely on an
   * instance): `true` when it starts waiting for a pooled connection, `false` once it has one (at
   * once, on a single connection). A deadline that passes while it waits is no statement
   * PostgreSQL left unanswered but no connection in time (withStatementDeadline:
   * FERRY_DATABASE_UNAVAILABLE); one that passes after `false`, FERRY_TIMEOUT; an executor that
   * never calls it (Prisma) claims neither (FERRY_TIMEOUT, `details.connection: 'unknown'`).
   */
  readonly onConnecting?: (waiting: boolean) => void;
}

export interface SqlExecutor {
  query<T = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
    options?: StatementOptions,
  ): Promise<T[]>;
  execute(text: string, values?: readonly unknown[], options?: StatementOptions): Promise<number>;
  /** Runs `work` in a new transaction; on an executor that already is one, joins it. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True when this executor is bound to an open transaction. */
  readonly inTransaction: boolean;
}

/**
 * How ferry works with an application's database client: its own statements on `db`, and
 * transactions of the application's client, typed `TTx` (a Prisma transaction client, a pg
 * `PoolClient`, a Kysely `Transaction`), that ferry's statements join through `bind`. The inbox
 * runs each handler in `transaction` and completes the receipt on `bind(tx)`, so the handler's
 * writes and the completion commit or roll back together.
 *
 * Adapters: `prismaTransactions(prisma)`, `pgTransactions(pool)`, and `kyselyTransactions(db)`
 * from `@ferry/core/kysely`.
 */
export interface TransactionAdapter<TTx> {
  /** ferry's statements outside the application's transactions (acceptance, claims, leases). */
  readonly db: SqlExecutor;
  /** Runs `work` in a new transaction of the application's client: committed when it resolves. */
  transaction<T>(work: (tx: TTx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** ferry's executor inside `tx`, a transaction `transaction` opened. */
  bind(tx: TTx): SqlExecutor;
  /**
   * How many connections the client's pool holds, when the adapter knows it (`pgTransactions`:
   * the pool's `max`). The handler transactions and ferry's own statements (lease renewals,
   * claims, acceptance) share them: an Inbox whose `worker.concurrency` is not below it logs a
   * warning (review 40: handlers holding every connection starved the renewals of their leases).
   */
  readonly connections?: number;
}

export function isTransactionAdapter(value: unknown): value is TransactionAdapter<unknown> {
  const candidate = value as Partial<TransactionAdapter<unknown>> | null;
  return (
    typeof candidate?.bind === 'function' &&
    typeof candidate.transaction === 'function' &&
    typeof candidate.db === 'object'
  );
}

/**
 * A Kysely instance or `Transaction`, described by shape: kysely is an optional peer
 * dependency, so the application API names none of its types.
 */
export interface KyselyLike {
  readonly isTransaction: boolean;
  executeQuery(...args: never[]): Promise<unknown>;
}

/** The part of a Prisma transaction client ferry uses. */
export interface PrismaTransactionLike {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/**
 * The part of a Prisma client ferry uses: raw SQL plus interactive transactions. `$transaction`
 * is typed loosely so every generated client (whose overloads differ by version) fits; ferry
 * only ever calls its interactive form, through `interactiveTransaction`.
 */
export interface PrismaClientLike extends PrismaTransactionLike {
  $transaction: (...args: never[]) => Promise<unknown>;
}

/** Prisma's interactive `$transaction(fn, { maxWait, timeout })`, the one form ferry uses. */
type InteractiveTransaction = <R>(
  fn: (tx: PrismaTransactionLike) => Promise<R>,
  options: { maxWait?: number; timeout?: number; isolationLevel?: 'ReadCommitted' },
) => Promise<R>;

/** Runs `work` in an interactive transaction of the application's Prisma client. */
export function interactiveTransaction<R>(
  client: PrismaClientLike,
  work: (tx: PrismaTransactionLike) => Promise<R>,
  options: { maxWaitMs?: number; timeoutMs?: number; isolation?: 'read committed' } = {},
): Promise<R> {
  try {
    prismaClientOption(client);
  } catch (error) {
    return Promise.reject(error);
  }
  const run = client.$transaction.bind(client) as unknown as InteractiveTransaction;
  return run(work, {
    maxWait: options.maxWaitMs ?? 5_000,
    timeout: options.timeoutMs ?? 10_000,
    ...(options.isolation === 'read committed' ? { isolationLevel: 'ReadCommitted' as const } : {}),
  });
}

/** A Prisma client given as `client` (interactiveTransaction, prismaTransactions), else FERRY_CONFIG_INVALID. */
function prismaClientOption(client: unknown): void {
  methodsOption('client', client, ['$transaction'], 'a Prisma client');
}

/**
 * A root client opens transactions; a transaction client does not. Prisma 7's transaction
 * client also carries `$transaction` (it joins the open transaction), so the root is told
 * apart by `$disconnect`, which only the root client has.
 */
function hasTransactions(client: PrismaTransactionLike): client is PrismaClientLike {
  const candidate = client as Partial<PrismaClientLike> & { $disconnect?: unknown };
  return typeof candidate.$transaction === 'function' && typeof candidate.$disconnect === 'function';
}

/**
 * Runs `send` with `text` registered under its prepared name (when it has parameters); a statement
 * PostgreSQL lost behind the driver (SQLSTATE 26000) gives the text a new name (preparedLost).
 */
async function named<T>(text: string, values: readonly unknown[], send: () => Promise<T>): Promise<T> {
  const name = values.length > 0 ? preparedName(text) : undefined;
  try {
    return await send();
  } catch (error) {
    if (name !== undefined && sqlStateOf(error) === '26000') preparedLost(name);
    throw error;
  }
}

/**
 * ferry's executor on a Prisma client or transaction client. Each parameterized text it sends is
 * registered under its prepared name (statementNames.ts), so a client built with
 * `new PrismaPg(pool, { statementNameGenerator: ferryStatementNames })` prepares it.
 */
export function fromPrisma(client: PrismaTransactionLike): SqlExecutor {
  methodsOption(
    'client',
    client,
    ['$queryRawUnsafe', '$executeRawUnsafe'],
    'a Prisma client or transaction client',
  );
  const inTransaction = !hasTransactions(client);
  const executor: SqlExecutor = {
    inTransaction,
    async query<T>(text: string, values: readonly unknown[] = []) {
      return named(text, values, () => client.$queryRawUnsafe<T[]>(text, ...values));
    },
    async execute(text: string, values: readonly unknown[] = []) {
      return named(text, values, () => client.$executeRawUnsafe(text, ...values));
    },
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}) {
      if (!hasTransactions(client)) return work(executor);
      return interactiveTransaction(client, (tx) => work(fromPrisma(tx)), options);
    },
  };
  return executor;
}

/** A Prisma client whose interactive transactions hand `TTx` to their callback. */
export type PrismaClientOf<TTx> = PrismaClientLike & {
  $transaction(fn: (tx: TTx) => Promise<unknown>, options?: never): Promise<unknown>;
};

/**
 * The transaction adapter of a Prisma client: `TTx` is inferred from the generated client
 * (`Prisma.TransactionClient`). ferry's own statements run on `options.db` when given (e.g.
 * `fromPg(pool)`, for prepared statements on node-postgres), else on the client.
 */
export function prismaTransactions<TTx = PrismaTransactionLike>(
  client: PrismaClientOf<TTx>,
  options: { db?: SqlExecutor } = {},
): TransactionAdapter<TTx> {
  prismaClientOption(client);
  if (options.db !== undefined) executorOption('db', options.db);
  return {
    db: options.db ?? fromPrisma(client),
    transaction: (work, transactionOptions) =>
      interactiveTransaction(client, (tx) => work(tx as TTx), transactionOptions),
    bind: (tx) => fromPrisma(tx as PrismaTransactionLike),
  };
}
