import { FerryConfigError, FerryError } from '../errors';
import { translateDbError } from '../sql/dbErrors';
import { executorOption, received } from '../optionChecks';
import { isTransactionAdapter, type SqlExecutor, type TransactionAdapter } from '../sql/executor';
import { TABLE } from './sql/fragments';

/**
 * The inbox's `client`: a transaction adapter (prismaTransactions, pgTransactions,
 * kyselyTransactions) or a Prisma client (its interactive transactions and raw SQL), else
 * FerryConfigError naming `client` (`client.db` for an adapter whose `db` is no SqlExecutor).
 * Unchecked, a client left out (`undefined` from a configuration) failed with a TypeError, and a
 * connection string at the first acceptance.
 */
export function checkInboxClient(client: unknown): void {
  if (isTransactionAdapter(client)) {
    // ferry's acceptance, claims and leases run on it (a hand-made adapter's too).
    executorOption('client.db', client.db);
    return;
  }
  const prisma = (typeof client === 'object' && client !== null ? client : {}) as Record<string, unknown>;
  const methods = ['$transaction', '$queryRawUnsafe', '$executeRawUnsafe'];
  if (methods.every((method) => typeof prisma[method] === 'function')) return;
  throw new FerryConfigError(
    'client',
    'must be a Prisma client or a transaction adapter (prismaTransactions, pgTransactions, ' +
      `kyselyTransactions), got ${received(client)}`,
  );
}

/** How long past transactionTimeoutMs the database check waits for its handler transaction. */
const CHECK_GRACE_MS = 1_000;

/**
 * Which database a connection reaches, its name and the server's start (one per server run), and
 * the table its unqualified statements reach there: the schema its search_path resolves
 * ferry_inbox_receipts to (null: none), quoted.
 */
// The start as an instant (epoch), not as text: text depends on each session's TimeZone and
// DateStyle, and two sessions of one server set differently were refused (review 41).
const SQL = `SELECT current_database() AS database,
                    extract(epoch FROM pg_postmaster_start_time())::text AS started,
                    (SELECT quote_ident(n.nspname) FROM pg_class c
                       JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE c.oid = to_regclass('${TABLE}')) AS schema`;

interface Reached {
  readonly database: string;
  readonly started: string;
  readonly schema: string | null;
}

function tableOf(reached: Reached): string {
  return reached.schema === null ? `no ${TABLE} (search_path)` : `${reached.schema}.${TABLE}`;
}

/**
 * Checks that the handler transactions (`adapter.transaction`) and ferry's own statements (`db`,
 * the adapter's `db`, e.g. `prismaTransactions(prisma, { db: fromPg(pool) })`) reach the same
 * database. Built from two settings, they may not: acceptance and claims then ran on one, each
 * handler transaction's claim check on the other found no receipt, and every message went DEAD
 * as a lost lease, the cause never named (review 40). Throws FerryConfigError naming both.
 * `open()` throws once the inbox closed: the handler transaction is not begun then (review 74).
 */
export async function checkSameDatabase<TTx>(
  adapter: TransactionAdapter<TTx>,
  db: SqlExecutor,
  timeoutMs: number,
  open: () => void = () => undefined,
): Promise<void> {
  const [ferry] = await db.query<Reached>(SQL);
  open();
  let handler: Reached | undefined;
  // Bounded as the worker bounds a handler transaction: Prisma's own timeout rolls back on the
  // same stuck connection and never gives the statement up, so past transactionTimeoutMs and a
  // grace the check stops waiting (the adapter told through the signal) and initialize() fails
  // with a retriable FERRY_TIMEOUT instead of hanging (review 41).
  const abandon = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const timeout = new FerryError(
        'FERRY_TIMEOUT',
        `the database check's handler transaction did not settle within ${timeoutMs + CHECK_GRACE_MS} ms`,
      );
      abandon.abort(timeout);
      reject(timeout);
    }, timeoutMs + CHECK_GRACE_MS);
  });
  late.catch(() => undefined);
  try {
    const checking = adapter.transaction(async (tx) => (await adapter.bind(tx).query<Reached>(SQL))[0], {
      timeoutMs,
      maxWaitMs: timeoutMs,
      signal: abandon.signal,
    });
    checking.catch(() => undefined);
    handler = await Promise.race([checking, late]);
  } catch (error) {
    throw translateDbError(error, 'inbox initialize (handler transaction)');
  } finally {
    clearTimeout(timer);
  }
  if (ferry === undefined || handler === undefined) return;
  if (ferry.database === handler.database && ferry.started === handler.started) {
    if (ferry.schema === handler.schema) return;
    // One database, two search_paths: claims and acceptance on one table, each handler
    // transaction's claim check and completion on another (or none).
    throw new FerryConfigError(
      'db',
      `ferry's own statements reach ${tableOf(ferry)} but the handler transactions reach ${tableOf(handler)} in database "${ferry.database}": both must resolve it to the same table (the search_path, or Prisma's ?schema=, of the adapter's db and its client)`,
    );
  }
  throw new FerryConfigError(
    'db',
    `ferry's own statements reach database "${ferry.database}" (server started ${ferry.started}) but the handler transactions reach "${handler.database}" (server started ${handler.started}): both must be the same database (the adapter's db and its client)`,
  );
}

/**
 * Why the adapter's pool is too small for the worker's `concurrency` (when the adapter knows its
 * size, `TransactionAdapter.connections`), or null: with one connection per lane every connection
 * is held by a running handler, each lease renewal waits for one past its deadline, and handlers
 * longer than the lease lose it (review 40). A warning, not a refusal: small pools are legitimate
 * for short handlers and tests, and the spec leaves the sizing to the application.
 */
export function poolSizeWarning(connections: number | undefined, concurrency: number): string | null {
  if (connections === undefined || connections > concurrency) return null;
  return `worker.concurrency is ${concurrency} but the pool holds ${connections} connections: running handlers can hold them all, and lease renewals (and claims, acceptance) then wait for one; a handler running longer than the lease loses it. Give the pool more connections than worker.concurrency`;
}
