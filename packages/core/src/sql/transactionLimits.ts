import { onAbort } from '../deadline';
import { FerryError } from '../errors';
import { integerOption, MAX_TIMER_MS } from '../optionChecks';
import type { SqlExecutor, TransactionOptions } from './executor';

/**
 * TransactionOptions for the clients that have no such options of their own (node-postgres,
 * Kysely); Prisma applies its own `timeout` and `maxWait`.
 */

/**
 * How soon PostgreSQL notices, during a long statement, that the client closed the connection:
 * the transaction-local client_connection_check_interval (PostgreSQL 14+). Without it a backend
 * whose connection ferry closed (fromPg, when the caller gives up on the transaction) runs its
 * statement on, holding the transaction's locks, until it next writes to the client. Set only
 * where the server has the setting and can honour it (Linux: elsewhere PostgreSQL 14 refuses any
 * value but 0), so the statement never fails for it; elsewhere the column is null.
 */
export const CONNECTION_CHECK_INTERVAL = '1s';
export const CONNECTION_CHECK = `
  CASE WHEN current_setting('client_connection_check_interval', true) IS NOT NULL
        AND version() ILIKE '%linux%'
       THEN set_config('client_connection_check_interval', '${CONNECTION_CHECK_INTERVAL}', true) END`;

/**
 * The transaction's backend, as the first statement reads it: its pid, and its transaction's
 * start (microseconds since the epoch, as text: pg_stat_activity.xact_start), so that a cancel of
 * a statement of this transaction (kysely.ts) cannot reach a later transaction of that backend.
 */
export interface TransactionBackend {
  readonly pid: number;
  readonly startedUs: string;
}

const BACKEND = `pg_backend_pid() AS pid, (extract(epoch FROM now()) * 1000000)::bigint::text AS "startedUs"`;

/** The settings, and the transaction's backend. */
const LIMIT = `
  SELECT set_config('statement_timeout', $1, true) AS statement_timeout,
         set_config('idle_in_transaction_session_timeout', $1, true) AS idle_timeout,
         ${CONNECTION_CHECK.trim()} AS connection_check,
         ${BACKEND}`;

// txid_current() assigns the transaction its id now if it has none yet.
const XID = 'txid_current()::text AS xid';
const IDENTIFY_ONLY = `SELECT ${XID}`;
const LIMIT_AND_IDENTIFY = `${LIMIT}, ${XID}`;

/**
 * A TransactionOptions key of ferry's own (not exported from the package): withDeadlines, which
 * needs the transaction's id (commitOutcome.ts), asks an executor that sends a first statement of
 * its own (fromPg's BEGIN with the limits, Kysely's limits) to read the id in it and tell this
 * callback, before the work runs. An executor that does not (Prisma, an application's own) leaves
 * it uncalled, and withDeadlines reads the id itself (limitAndIdentify): one round trip, not two,
 * and the limits set once.
 */
export const IDENTIFY: unique symbol = Symbol('ferry.identifyTransaction');

/** TransactionOptions as ferry's executors read them, IDENTIFY included. */
export interface IdentifyingOptions extends TransactionOptions {
  readonly [IDENTIFY]?: (xid: string) => void;
}

/** Tells `options`' IDENTIFY callback the id in `row` (the executor's first statement's). */
export function identified(options: IdentifyingOptions, row: unknown): void {
  const xid = (row as { xid?: unknown } | undefined)?.xid;
  if (typeof xid === 'string') options[IDENTIFY]?.(xid);
}

/**
 * `timeoutMs` as transaction-local settings, the first statement of the transaction: no
 * statement and no pause between statements may last longer, and PostgreSQL ends a session
 * left idle in the transaction (so a stuck caller cannot hold its locks past the deadline).
 * Resolves the transaction's backend when the transaction can be given up (a timeout or a
 * signal), else sends nothing (unless IDENTIFY asks for the id: read in the same statement).
 */
export async function limitTransaction(
  tx: SqlExecutor,
  options: IdentifyingOptions,
): Promise<TransactionBackend | undefined> {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  const xid = options[IDENTIFY] === undefined ? '' : `, ${XID}`;
  if (timeoutMs === undefined && options.signal === undefined && xid === '') return undefined;
  const [row] =
    timeoutMs === undefined
      ? await tx.query<TransactionBackend>(`SELECT ${BACKEND}${xid}`)
      : await tx.query<TransactionBackend>(`${LIMIT}${xid}`, [`${timeoutMs}ms`]);
  identified(options, row);
  return row;
}

/**
 * limitTransaction and the transaction's id in one round trip, for a transaction that changes
 * something (withDeadlines': the outcome of a COMMIT whose answer was lost is asked by this id,
 * commitOutcome.ts). A transaction that would have written nothing pays for an id all the same.
 */
export async function limitAndIdentify(tx: SqlExecutor, options: TransactionOptions): Promise<string> {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  const [row] =
    timeoutMs === undefined
      ? await tx.query<{ xid: string }>(IDENTIFY_ONLY)
      : await tx.query<{ xid: string }>(LIMIT_AND_IDENTIFY, [`${timeoutMs}ms`]);
  return (row as { xid: string }).xid;
}

/** The longest statement_timeout PostgreSQL holds, which is also the longest delay of a Node timer. */
export const MAX_TIMEOUT_MS = MAX_TIMER_MS;

/**
 * `timeoutMs` as the settings can hold it: an integer from 0 to MAX_TIMEOUT_MS, else
 * FERRY_CONFIG_INVALID. 0 is PostgreSQL's "no limit": no settings and no deadline (undefined).
 */
export function checkedTimeout(timeoutMs: number | undefined): number | undefined {
  if (timeoutMs === undefined) return undefined;
  const checked = integerOption('timeoutMs', timeoutMs, 0, MAX_TIMEOUT_MS);
  return checked === 0 ? undefined : checked;
}

/**
 * BEGIN and limitTransaction's settings in one simple-protocol string, one round trip, for a
 * client that sends its own BEGIN (node-postgres). Set before the first statement, the limits
 * bound it too: a setting made inside a statement does not bound that statement (a claim check
 * waiting behind a lock on its table would wait for as long as the lock is held). `timeoutMs`
 * is an integer (checkedTimeout), inlined: its text holds no quote. With IDENTIFY, the
 * transaction's id is read in it too (tell it with `identified`, the last result's row).
 */
export function beginLimited(options: IdentifyingOptions): string {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  const identify = options[IDENTIFY] !== undefined;
  const begin =
    options.isolation === 'read committed' ? 'BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE' : 'BEGIN';
  if (timeoutMs === undefined) return identify ? `${begin}; ${IDENTIFY_ONLY}` : begin;
  const limit = identify ? LIMIT_AND_IDENTIFY : LIMIT;
  return `${begin}; ${limit.replaceAll('$1', `'${timeoutMs}ms'`).trim()}`;
}

/**
 * How long past `timeoutMs` a whole-transaction deadline waits (at most 1 s, at most timeoutMs):
 * here, and withDeadlines' (statementDeadline.ts) after it.
 */
export const DEADLINE_GRACE_MS = 1_000;

/**
 * How long an adapter that cannot close the transaction's connection (Kysely) waits, once the
 * transaction is given up, for it to end: the cancel of a running statement, the statement's end,
 * the ROLLBACK's answer. Past it the transaction fails with FERRY_TIMEOUT and the connection is
 * left to the driver (kysely.ts).
 */
export const ABANDONED_END_MS = 5_000;

/** The error of a transaction given up on that has not ended within ABANDONED_END_MS. */
export function abandonedNotEnded(): FerryError {
  return new FerryError(
    'FERRY_TIMEOUT',
    `an abandoned transaction did not roll back within ${ABANDONED_END_MS} ms: its connection stays checked out until the driver gives up on it (the pool's query_timeout)`,
    { details: { abandonedEndMs: ABANDONED_END_MS } },
  );
}

/** Whether `error` is abandonedNotEnded()'s: the caller may no longer be waiting, so it is reported. */
export function isAbandonedNotEnded(error: unknown): boolean {
  // `error` may be what a handler threw: a Proxy whose getPrototypeOf trap throws makes
  // instanceof throw, and this runs in a rejection handler (a throw there is unhandled).
  try {
    return error instanceof FerryError && error.details.abandonedEndMs === ABANDONED_END_MS;
  } catch {
    return false;
  }
}

/** Where a transaction stands, for its deadline: once it asked to commit, the outcome is PostgreSQL's. */
export interface TransactionProgress {
  committing: boolean;
}

/**
 * When an adapter that holds the transaction's connection (node-postgres, Kysely) ends the
 * transaction while its work is still running: `ended` rejects
 * - with FERRY_TIMEOUT once `timeoutMs` (and its grace, so that a statement PostgreSQL's own limit
 *   cancels fails with PostgreSQL's error) passed, unless the transaction is committing by then;
 * - with the signal's reason once `options.signal` aborts (the caller gave up on the transaction),
 *   committing or not: the outcome of a commit in flight is then unknown to the caller.
 * The adapter then closes or rolls back the connection. Never settles without either.
 */
export function transactionDeadline(
  options: TransactionOptions,
  progress: Readonly<TransactionProgress>,
): { ended: Promise<never>; expired(): boolean; clear(): void } {
  const timeoutMs = checkedTimeout(options.timeoutMs);
  const { signal } = options;
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => void) | undefined;
  const ended = new Promise<never>((_, reject) => {
    const end = (reason: unknown): void => {
      expired = true;
      reject(reason);
    };
    if (signal?.aborted) return end(signal.reason);
    if (signal) unlisten = onAbort(signal, () => end(signal.reason));
    if (timeoutMs === undefined) return;
    timer = setTimeout(
      () => {
        if (progress.committing) return;
        end(
          new FerryError('FERRY_TIMEOUT', `the transaction did not finish within ${timeoutMs} ms`, {
            details: { timeoutMs },
          }),
        );
      },
      // Past MAX_TIMEOUT_MS a Node timer fires at once.
      Math.min(timeoutMs + Math.min(timeoutMs, DEADLINE_GRACE_MS), MAX_TIMEOUT_MS),
    );
  });
  ended.catch(() => undefined);
  const clear = (): void => {
    clearTimeout(timer);
    unlisten?.();
  };
  return { ended, expired: () => expired, clear };
}

/**
 * Opens a transaction with `open`, giving up when it has not started within `maxWaitMs` (no
 * pooled connection): rejects with a retriable FERRY_DATABASE_UNAVAILABLE, and a transaction
 * that starts later throws at once, so it rolls back and hands its connection back. A `signal`
 * aborted already rejects with its reason: no connection is taken, nothing runs; one aborted while
 * the transaction waits for its connection gives the wait up the same way.
 */
export function startWithin<TTx, T>(
  { maxWaitMs, signal }: TransactionOptions,
  open: (work: (tx: TTx) => Promise<T>) => Promise<T>,
  work: (tx: TTx) => Promise<T>,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (maxWaitMs === undefined && signal === undefined) return open(work);
  const late = () =>
    new FerryError('FERRY_DATABASE_UNAVAILABLE', `no connection for a transaction within ${maxWaitMs} ms`, {
      details: { maxWaitMs },
    });
  let state: 'waiting' | 'started' | 'abandoned' = 'waiting';
  let reason: () => unknown = late;
  return new Promise<T>((resolve, reject) => {
    const abandon = (why: () => unknown): void => {
      if (state !== 'waiting') return;
      state = 'abandoned';
      reason = why;
      reject(why());
    };
    const timer = maxWaitMs === undefined ? undefined : setTimeout(() => abandon(late), maxWaitMs);
    const onAbort = (): void => abandon(() => signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const stopWaiting = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    open(async (tx) => {
      if (state === 'abandoned') throw reason();
      state = 'started';
      stopWaiting();
      return work(tx);
    })
      .then(resolve, reject)
      .finally(stopWaiting);
  });
}
