import { deadlineSignal } from '../deadline';
import { FerryError } from '../errors';
import type { SqlExecutor, StatementOptions } from './executor';
import { answeredByServer } from './sqlState';

/**
 * ferry's own statements on `db` (acceptance, claims, leases, completions: each outside the
 * application's transactions), each bounded by `timeoutMs` whatever the driver is configured to do.
 * A driver with no `query_timeout` waits for an answer for as long as its connection stays open,
 * and a half-open connection (a peer that went silent, no FIN, no RST) stays open for good; past
 * the deadline ferry stops waiting and the statement fails with a retriable FERRY_TIMEOUT. Its
 * signal aborts then, so an executor that owns the connection destroys it (fromPg); on Prisma the
 * connection stays the driver's until the driver gives up on it (see the package README). The
 * caller's `onAbandoned` then learns when the statement can no longer take effect (statementEnded).
 * Transactions are not bounded here: they carry their own limits (`timeoutMs`, `maxWaitMs`).
 */
export function withStatementDeadline(db: SqlExecutor, timeoutMs: number): SqlExecutor {
  const bounded = <T>(send: (options: StatementOptions) => Promise<T>, caller?: StatementOptions) => {
    const done = new AbortController();
    const stops = caller?.signal ? [done.signal, caller.signal] : [done.signal];
    const signal = deadlineSignal(timeoutMs, ...stops);
    const options: StatementOptions = { ...caller, signal };
    return new Promise<T>((resolve, reject) => {
      const sent = send(options);
      const giveUp = (): void => {
        if (done.signal.aborted) return;
        caller?.onAbandoned?.(statementEnded(sent, signal));
        if (caller?.signal?.aborted) return reject(caller.signal.reason);
        reject(
          new FerryError('FERRY_TIMEOUT', `the database did not answer a statement within ${timeoutMs} ms`, {
            details: { timeoutMs },
          }),
        );
      };
      signal.addEventListener('abort', giveUp, { once: true });
      // Settled: the deadline's timer is cleared (through `done`) before the caller hears of it.
      const settle = (): void => {
        signal.removeEventListener('abort', giveUp);
        done.abort();
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
    inTransaction: db.inTransaction,
    query: (text, values, options) => bounded((statement) => db.query(text, values, statement), options),
    execute: (text, values, options) => bounded((statement) => db.execute(text, values, statement), options),
    transaction: (work, options) => db.transaction(work, options),
  };
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
