/**
 * The one seam between ferry and PostgreSQL. ferry's SQL is always parameterized text
 * ($1, $2, ...) with values bound by the driver; nothing is built from input.
 *
 * `fromPrisma` adapts the application's Prisma client (or one of its interactive
 * transaction clients): work passed a transaction joins the caller's transaction.
 */
export interface TransactionOptions {
  /** Milliseconds the whole transaction may run (Prisma `timeout`). */
  timeoutMs?: number;
  /** Milliseconds to wait for a pooled connection (Prisma `maxWait`). */
  maxWaitMs?: number;
}

export interface SqlExecutor {
  query<T = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<T[]>;
  execute(text: string, values?: readonly unknown[]): Promise<number>;
  /** Runs `work` in a new transaction; on an executor that already is one, joins it. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** True when this executor is bound to an open transaction. */
  readonly inTransaction: boolean;
  /** The Prisma client or transaction client behind this executor, handed to user code as-is. */
  readonly client: PrismaTransactionLike;
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
  options: { maxWait?: number; timeout?: number },
) => Promise<R>;

/** Runs `work` in an interactive transaction of the application's Prisma client. */
export function interactiveTransaction<R>(
  client: PrismaClientLike,
  work: (tx: PrismaTransactionLike) => Promise<R>,
  options: { maxWaitMs?: number; timeoutMs?: number } = {},
): Promise<R> {
  const run = client.$transaction.bind(client) as unknown as InteractiveTransaction;
  return run(work, {
    maxWait: options.maxWaitMs ?? 5_000,
    timeout: options.timeoutMs ?? 10_000,
  });
}

function hasTransactions(client: PrismaTransactionLike): client is PrismaClientLike {
  return typeof (client as Partial<PrismaClientLike>).$transaction === 'function';
}

export function fromPrisma(client: PrismaTransactionLike): SqlExecutor {
  const inTransaction = !hasTransactions(client);
  const executor: SqlExecutor = {
    client,
    inTransaction,
    async query<T>(text: string, values: readonly unknown[] = []) {
      return client.$queryRawUnsafe<T[]>(text, ...values);
    },
    async execute(text: string, values: readonly unknown[] = []) {
      return client.$executeRawUnsafe(text, ...values);
    },
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}) {
      if (!hasTransactions(client)) return work(executor);
      return interactiveTransaction(client, (tx) => work(fromPrisma(tx)), options);
    },
  };
  return executor;
}
