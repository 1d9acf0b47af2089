import { clearableAny, clearableDeadline } from '../deadline';
import { FerryError } from '../errors';
import { integerOption, knownKeysOption, type OptionKeys } from '../optionChecks';
import { settlesWithin } from '../outbox/settle';
import { commitOutcome, otherConnectionOf, type CommitOutcome } from './commitOutcome';
import type { SqlExecutor, StatementOptions, TransactionOptions } from './executor';
import { answeredByServer, sqlStateOf } from './sqlState';
import {
  checkedTimeout,
  DEADLINE_GRACE_MS,
  IDENTIFY,
  limitAndIdentify,
  MAX_TIMEOUT_MS,
  type IdentifyingOptions,
} from './transactionLimits';

/**
 * Default and bounds of every statement deadline option: the inbox's and the admins'
 * `statementTimeoutMs`, the metrics' `stats.statementTimeoutMs`, the relay's `statementTimeout`.
 */
export const STATEMENT_TIMEOUT_DEFAULT_MS = 30_000;
export const STATEMENT_TIMEOUT_BOUNDS = [100, 3_600_000] as const;

/** The option of the admin constructors (outbox, inbox, privileged inbox). */
export interface StatementTimeoutOptions {
  /**
   * Deadline of each statement the admin sends outside a transaction, and of each transaction it
   * opens (an audited action): past it the call fails with a retriable FERRY_TIMEOUT (or
   * FERRY_DATABASE_UNAVAILABLE when no pooled connection came in time: told by fromPg and Kysely;
   * on Prisma, whose driver adapter takes the connection unseen, a statement waiting for one fails
   * with FERRY_TIMEOUT, `details.connection: 'unknown'`), or, when a change's COMMIT was
   * sent and PostgreSQL cannot say afterwards whether it landed, with FERRY_OUTCOME_UNKNOWN (not
   * retriable: list before acting again). Default 30,000 ms, 100 to
   * 3,600,000. An admin given the caller's open transaction leaves its limits to the caller.
   */
  statementTimeoutMs?: number;
}

const KEYS = { statementTimeoutMs: true } as const satisfies OptionKeys<StatementTimeoutOptions>;

/** An admin's deadline from its `options`: unknown keys refused (a relay-style `statementTimeout`). */
export function adminStatementTimeout(options: StatementTimeoutOptions | undefined): number {
  options = knownKeysOption('', options, KEYS);
  return statementTimeoutOption('statementTimeoutMs', options?.statementTimeoutMs);
}

/** `value` checked against STATEMENT_TIMEOUT_BOUNDS (FERRY_CONFIG_INVALID naming `field`), or the default. */
export function statementTimeoutOption(field: string, value: number | undefined): number {
  const [min, max] = STATEMENT_TIMEOUT_BOUNDS;
  return integerOption(field, value ?? STATEMENT_TIMEOUT_DEFAULT_MS, min, max);
}

/**
 * `db` with every wait ferry owns on it bounded by `timeoutMs`, for callers of short statements
 * and short transactions (the admins, health, the metrics stats read). Each statement outside a
 * transaction as withStatementDeadline. Each transaction `db` opens gets `timeoutMs` as its
 * `timeoutMs` and `maxWaitMs` unless the caller gives its own, and its first statement sets them
 * as PostgreSQL's transaction-local limits (Prisma sets none of its own), so a statement waiting
 * on a lock ends with PostgreSQL's 57014, and reads the transaction's id (limitAndIdentify: these
 * transactions are for changes, the audited admin actions); fromPg and Kysely, which send such a
 * first statement of their own, read the id in it (IDENTIFY), so the limits are set once. A transaction that still has not
 * settled once max wait, timeout and twice the grace have passed (a silent server) is given up:
 * its TransactionOptions.signal aborts, so fromPg closes its connection (committing or not; on
 * Prisma the connection stays the driver's, package README). It fails with a retriable
 * FERRY_TIMEOUT if its COMMIT was not sent yet (PostgreSQL rolls it back). Once the COMMIT was
 * sent, a failure without PostgreSQL's own answer (the deadline, a lost connection) leaves the
 * outcome to PostgreSQL, asked on another connection (lostCommit): committed → the work's result,
 * as if the answer had come; rolled back → the failure as it came; no answer →
 * FERRY_OUTCOME_UNKNOWN (not retriable, `details.outcome: 'unknown'`): the change may have been
 * applied, look before acting again.
 * On an executor bound to the caller's open transaction nothing changes: that transaction, and
 * its limits, are the caller's.
 */
export function withDeadlines(db: SqlExecutor, timeoutMs: number): SqlExecutor {
  if (db.inTransaction) return db;
  const bounded = withStatementDeadline(db, timeoutMs);
  return {
    inTransaction: false,
    query: bounded.query,
    execute: bounded.execute,
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
      const limits = { timeoutMs, maxWaitMs: timeoutMs, ...options };
      const giveUp = new AbortController();
      // Not AbortSignal.any: Node 20 keeps every signal combined with the caller's in it until it
      // aborts, one entry per transaction under a long-lived signal (review 99); let go below.
      const joined = options?.signal ? clearableAny([options.signal, giveUp.signal]) : undefined;
      const signal = joined?.signal ?? giveUp.signal;
      let sent: { xid: string; result: T } | undefined;
      // fromPg and Kysely read the id with their own first statement, with the limits (IDENTIFY).
      let begun: string | undefined;
      const identifying: IdentifyingOptions = { ...limits, signal, [IDENTIFY]: (xid) => void (begun = xid) };
      const run = db.transaction(async (tx) => {
        const xid = begun ?? (await limitAndIdentify(tx, limits));
        const result = await work(tx);
        sent = { xid, result }; // what follows is the COMMIT
        return result;
      }, identifying);
      try {
        return await settledWithin(run, limits, giveUp);
      } catch (error) {
        if (sent === undefined) throw error;
        return lostCommit(db, bounded, sent, error, timeoutMs);
      } finally {
        joined?.clear();
      }
    },
  };
}

/**
 * A transaction that failed after its COMMIT was sent (no answer in time, or its connection lost):
 * its result if PostgreSQL committed it, `error` if PostgreSQL says it was
 * rolled back or refused the COMMIT itself, else FERRY_OUTCOME_UNKNOWN. Asked on `bounded` (`db`
 * with its statement deadline: a pool gives the question another connection), or, for an executor
 * over one connection, on the connection of its own it registered (otherConnectionOf).
 */
async function lostCommit<T>(
  db: SqlExecutor,
  bounded: SqlExecutor,
  sent: { xid: string; result: T },
  error: unknown,
  timeoutMs: number,
): Promise<T> {
  const other = otherConnectionOf(db)?.(timeoutMs);
  let outcome: CommitOutcome;
  try {
    outcome = await commitOutcome(
      other ? withStatementDeadline(other.db, timeoutMs) : bounded,
      sent.xid,
      timeoutMs,
    );
  } finally {
    other?.close();
  }
  if (outcome === 'committed') return sent.result;
  if (outcome === 'aborted' || refusedByPostgres(error)) throw error;
  throw new FerryError(
    'FERRY_OUTCOME_UNKNOWN',
    'the database did not answer a COMMIT, nor say afterwards whether it was applied: the change may ' +
      'have been applied; look before acting again',
    { cause: error, details: { outcome: 'unknown', timeoutMs } },
  );
}

/**
 * PostgreSQL answered the COMMIT with an error of its own (a deferred constraint, a serialization
 * failure): not committed. A connection exception (class 08) or a shutdown (57P) is no such answer.
 */
function refusedByPostgres(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state !== null && !state.startsWith('08') && !state.startsWith('57P');
}

/**
 * `run`, or FERRY_TIMEOUT once `limits` (max wait + timeout + twice the grace) have passed; then
 * `giveUp` aborts (the transaction's signal: fromPg closes its connection, committing or not).
 */
async function settledWithin<T>(
  run: Promise<T>,
  limits: TransactionOptions,
  giveUp: AbortController,
): Promise<T> {
  const timeoutMs = checkedTimeout(limits.timeoutMs);
  if (timeoutMs === undefined) return run;
  const grace = Math.min(timeoutMs, DEADLINE_GRACE_MS);
  const ms = Math.min((limits.maxWaitMs ?? 0) + timeoutMs + 2 * grace, MAX_TIMEOUT_MS);
  run.catch(() => undefined); // past the deadline nothing waits for it
  if (await settlesWithin(run, ms)) return run;
  const timeout = new FerryError('FERRY_TIMEOUT', `the transaction did not finish within ${ms} ms`, {
    details: { timeoutMs: ms },
  });
  giveUp.abort(timeout);
  throw timeout;
}

/**
 * ferry's own statements on `db` (acceptance, claims, leases, completions: each outside the
 * application's transactions), each bounded by `timeoutMs` whatever the driver is configured to do.
 * A driver with no `query_timeout` waits for an answer for as long as its connection stays open,
 * and a half-open connection (a peer that went silent, no FIN, no RST) stays open for good; past
 * the deadline ferry stops waiting and the statement fails with a retriable FERRY_TIMEOUT
 * (FERRY_DATABASE_UNAVAILABLE when the executor was still waiting for a connection: nothing was
 * sent, StatementOptions.onConnecting; an executor that does not tell, Prisma, gets FERRY_TIMEOUT
 * with `details.connection: 'unknown'`). Its signal aborts then, so an executor that owns the connection destroys it (fromPg); on Prisma the
 * connection stays the driver's until the driver gives up on it (see the package README). The
 * caller's `onAbandoned` then learns when the statement can no longer take effect (statementEnded).
 * Transactions are not bounded here: they carry their own limits (`timeoutMs`, `maxWaitMs`).
 */
export function withStatementDeadline(db: SqlExecutor, timeoutMs: number): SqlExecutor {
  const bounded = <T>(send: (options: StatementOptions) => Promise<T>, caller?: StatementOptions) => {
    // A caller that stopped already: the statement is not sent (an executor that ignores its
    // signal would otherwise wait for its answer with no deadline), so it can take no effect.
    if (caller?.signal?.aborted) {
      const refused = Promise.reject(caller.signal.reason as unknown);
      refused.catch(() => undefined);
      caller.onAbandoned?.(Promise.resolve(true), refused);
      return refused;
    }
    const deadline = clearableDeadline(timeoutMs, caller?.signal);
    const signal = deadline.signal;
    // Whether the executor still waits for a connection, or has one (StatementOptions.onConnecting);
    // 'unknown' for an executor that does not say (Prisma: its driver adapter takes the connection).
    let connection: 'unknown' | 'waiting' | 'obtained' = 'unknown';
    const onConnecting = (waiting: boolean): void => {
      connection = waiting ? 'waiting' : 'obtained';
      caller?.onConnecting?.(waiting);
    };
    const options: StatementOptions = { ...caller, signal, onConnecting };
    return new Promise<T>((resolve, reject) => {
      let sent: Promise<T>;
      try {
        sent = send(options);
      } catch (error) {
        // Thrown before a promise: nothing waits, so nothing stays on the caller's signal.
        deadline.clear();
        reject(error);
        return;
      }
      const giveUp = (): void => {
        caller?.onAbandoned?.(statementEnded(sent, signal), sent);
        if (caller?.signal?.aborted) return reject(caller.signal.reason);
        // Still waiting for a connection: nothing was sent, the database was not reached in time.
        reject(deadlineError(connection, timeoutMs));
      };
      signal.addEventListener('abort', giveUp, { once: true });
      // Settled: the deadline's timer is cleared before the caller hears of it.
      const settle = (): void => {
        signal.removeEventListener('abort', giveUp);
        deadline.clear();
      };
      sent.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  };
  return {
    // Read through: on an application's pg client it is the client's status now (perCallPgClient).
    get inTransaction() {
      return db.inTransaction;
    },
    query: (text, values, options) => bounded((statement) => db.query(text, values, statement), options),
    execute: (text, values, options) => bounded((statement) => db.execute(text, values, statement), options),
    transaction: (work, options) => db.transaction(work, options),
  };
}

/**
 * What a statement deadline that passed means, by what the executor said of its connection: none
 * came (FERRY_DATABASE_UNAVAILABLE: nothing was sent), or PostgreSQL did not answer the statement
 * (FERRY_TIMEOUT); an executor that does not say (Prisma) gets FERRY_TIMEOUT claiming neither,
 * `details.connection: 'unknown'`.
 */
function deadlineError(connection: 'unknown' | 'waiting' | 'obtained', timeoutMs: number): FerryError {
  if (connection === 'waiting') {
    return new FerryError(
      'FERRY_DATABASE_UNAVAILABLE',
      `no connection to the database within ${timeoutMs} ms`,
      {
        details: { timeoutMs },
      },
    );
  }
  if (connection === 'obtained') {
    return new FerryError('FERRY_TIMEOUT', `the database did not answer a statement within ${timeoutMs} ms`, {
      details: { timeoutMs },
    });
  }
  return new FerryError(
    'FERRY_TIMEOUT',
    `no answer from the database within ${timeoutMs} ms (this client does not say whether it was ` +
      'still waiting for a pooled connection or for the answer to a statement it sent)',
    { details: { timeoutMs, connection: 'unknown' } },
  );
}

/**
 * Whether a statement given up on can no longer take effect, once its driver call settles: true
 * when PostgreSQL answered (a result, which node-postgres and Prisma hand over only after the
 * statement's implicit commit, or an error carrying a SQLSTATE outside class 08) or when the
 * executor never sent it (it failed with `signal`'s own reason); false otherwise (a connection
 * lost or destroyed: the server may still run it).
 */
function statementEnded(sent: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  return sent.then(
    () => true,
    (error: unknown) => error === signal.reason || answeredByServer(error),
  );
}
