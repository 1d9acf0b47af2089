import { abortableDelay, backoffDelay, type BackoffPolicy } from '../backoff';
import { FerryError } from '../errors';
import type { SqlExecutor, TransactionOptions } from './executor';
import { codesOf, WRITE_CONFLICT_CODES } from './sqlState';

/**
 * How PostgreSQL (and Prisma, which names it its own way) says it rolled a transaction back only
 * because of a concurrent one: serialization_failure (40001; Prisma's P2034 and driver adapter
 * kind TransactionWriteConflict) or deadlock_detected (40P01). Nothing of it was applied.
 */
const SERIALIZATION_CODES: ReadonlySet<string> = new Set(['40001', ...WRITE_CONFLICT_CODES]);
const DEADLOCK = '40P01';

/** Runs of one statement or transaction, the first included. */
export const SERIALIZATION_ATTEMPTS = 5;

/** Short and jittered: the concurrent transaction that won is committed, or about to be. */
const RETRY_BACKOFF: BackoffPolicy = { initialMs: 5, maxMs: 100, multiplier: 2, jitter: 'full' };

/**
 * Wrap it inside the statement deadline (withStatementDeadline, withDeadlines' statements), so
 * that the deadline bounds every run of a statement, the READ COMMITTED transaction included
 * (review 31: outside it, that transaction had none).
 *
 * ferry's own statements and transactions on `db` (outside the application's transactions) run at
 * READ COMMITTED whatever the database's default. They run at the default isolation until
 * PostgreSQL refuses one for a concurrent transaction (40001), which READ COMMITTED never does to
 * them: the database (or the connection) defaults to REPEATABLE READ or SERIALIZABLE, and there
 * a claim meeting a row another relay claimed, a lease renewal meeting a completion, a duplicate
 * insert meeting its original or markDead meeting a renewal is refused where READ COMMITTED waits
 * or skips; each refusal stopped a relay cycle, failed an acceptance, cost a handler an attempt or
 * published an event twice (review29-defaultIsolation.test.ts). From then on every statement and
 * transaction of this executor runs in a transaction started READ COMMITTED
 * (TransactionOptions.isolation; a statement alone in one bounded by `timeoutMs`), the refused one
 * first: up to SERIALIZATION_ATTEMPTS runs in all, after a short backoff. A deadlock (40P01) is run
 * again the same way it ran. At READ COMMITTED nothing changes and nothing costs more. Every
 * statement and transaction ferry runs here is one it may run again: refused, it changed nothing.
 * An executor bound to an open transaction (the application's) is returned as it is: a refused
 * statement there ends that transaction, which is the application's to run again.
 */
export function withSerializationRetry(db: SqlExecutor, timeoutMs: number): SqlExecutor {
  if (db.inTransaction) return db;
  let readCommitted = false;
  const pinned = (options?: TransactionOptions): TransactionOptions => ({
    ...options,
    isolation: 'read committed',
  });
  const alone: TransactionOptions = { timeoutMs, maxWaitMs: timeoutMs };
  async function again<T>(
    run: () => Promise<T>,
    atReadCommitted: () => Promise<T>,
    stop?: AbortSignal,
  ): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await (readCommitted ? atReadCommitted() : run());
      } catch (error) {
        const refusal = refusalOf(error);
        if (refusal === 'serialization') readCommitted = true;
        if (attempt >= SERIALIZATION_ATTEMPTS || refusal === null || stop?.aborted) throw error;
        await abortableDelay(backoffDelay(attempt, RETRY_BACKOFF), stop ?? NEVER).catch(() => undefined);
        if (stop?.aborted) throw error;
      }
    }
  }
  return {
    inTransaction: false,
    query: (text, values, options) =>
      again(
        () => db.query(text, values, options),
        () => db.transaction((tx) => tx.query(text, values, options), pinned(alone)),
        options?.signal,
      ),
    execute: (text, values, options) =>
      again(
        () => db.execute(text, values, options),
        () => db.transaction((tx) => tx.execute(text, values, options), pinned(alone)),
        options?.signal,
      ),
    transaction: (work, options) =>
      again(
        () => db.transaction(work, options),
        () => db.transaction(work, pinned(options)),
        options?.signal,
      ),
  };
}

/**
 * `db` whose transactions all start READ COMMITTED, whatever the database's default: the admins'
 * (outbox, inbox) compare-and-set transitions tell `lost_claim` (the row was in the source status
 * when the statement started, a concurrent transition won) from `conflict` by what the statement
 * saw; at REPEATABLE READ the refused run was re-run at READ COMMITTED with a fresh snapshot and
 * answered `conflict` (review 35). Operator actions are rare: pinning them costs nothing that
 * matters. Statements alone are left as they are (withSerializationRetry handles those).
 */
export function withReadCommittedTransactions(db: SqlExecutor): SqlExecutor {
  if (db.inTransaction) return db;
  return {
    inTransaction: false,
    query: (text, values, options) => db.query(text, values, options),
    execute: (text, values, options) => db.execute(text, values, options),
    transaction: (work, options) => db.transaction(work, { ...options, isolation: 'read committed' }),
  };
}

const NEVER = new AbortController().signal;

/** Refused by PostgreSQL for a concurrent transaction (never a commit whose outcome is unknown). */
function refusalOf(error: unknown): 'serialization' | 'deadlock' | null {
  try {
    return readRefusal(error);
  } catch {
    return null; // a value whose properties cannot be read (a hostile Proxy) is no refusal
  }
}

function readRefusal(error: unknown): 'serialization' | 'deadlock' | null {
  if (error instanceof FerryError && error.code === 'FERRY_OUTCOME_UNKNOWN') return null;
  // A transaction's statements may be translated already: a FerryError naming the SQLSTATE, or
  // the driver's code when there is none (Prisma's kind TransactionWriteConflict).
  const codes = codesOf(error);
  // First: Prisma reports a deadlock with the kind and code of a write conflict too (review 31).
  if (codes.includes(DEADLOCK)) return 'deadlock';
  if (codes.some((code) => SERIALIZATION_CODES.has(code))) return 'serialization';
  return null;
}
