import { FerryConfigError } from '../errors';
import { translateDbError } from '../sql/dbErrors';
import type { SqlExecutor, TransactionAdapter } from '../sql/executor';

/** Which database a connection reaches: its name and the server's start (one per server run). */
const SQL = `SELECT current_database() AS database, pg_postmaster_start_time()::text AS started`;

interface Reached {
  readonly database: string;
  readonly started: string;
}

/**
 * Checks that the handler transactions (`adapter.transaction`) and ferry's own statements (`db`,
 * the adapter's `db`, e.g. `prismaTransactions(prisma, { db: fromPg(pool) })`) reach the same
 * database. Built from two settings, they may not: acceptance and claims then ran on one, each
 * handler transaction's claim check on the other found no receipt, and every message went DEAD
 * as a lost lease, the cause never named (review 40). Throws FerryConfigError naming both.
 */
export async function checkSameDatabase<TTx>(
  adapter: TransactionAdapter<TTx>,
  db: SqlExecutor,
  timeoutMs: number,
): Promise<void> {
  const [ferry] = await db.query<Reached>(SQL);
  let handler: Reached | undefined;
  try {
    handler = await adapter.transaction(async (tx) => (await adapter.bind(tx).query<Reached>(SQL))[0], {
      timeoutMs,
      maxWaitMs: timeoutMs,
    });
  } catch (error) {
    throw translateDbError(error, 'inbox initialize (handler transaction)');
  }
  if (ferry === undefined || handler === undefined) return;
  if (ferry.database === handler.database && ferry.started === handler.started) return;
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
