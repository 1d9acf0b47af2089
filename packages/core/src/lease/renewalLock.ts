import { endBackend } from '../sql/endBackend';
import type { SqlExecutor, StatementOptions } from '../sql/executor';

/**
 * How a lease renewal statement ends: the bound of its wait for a row lock, and how long it counts
 * in flight once the lease kit gave up on it (renewalStatement). One home for the inbox worker's
 * renewals (inbox/sql/renewLease.ts, renewQueued.ts) and the relay's (outbox/sql/renewLease.ts).
 */

/** What a renewal statement needs of its lease: the lease it sets and the kit's interval. */
export interface RenewalTiming {
  readonly leaseMs: number;
  readonly heartbeatIntervalMs: number;
}

/**
 * A lease renewal's bound on its wait for a row lock: a condition that is always true and sets,
 * for the statement's own transaction, lock_timeout to `param` (a parameter such as '125ms'). It
 * is a filter of the row the renewal reaches (set_config is volatile: never hoisted), so it runs
 * before the row is locked, and a lock another session holds on the row (an operator's open
 * transaction) fails the renewal with 55P03 when the bound passes. Without it the statement
 * waited until its statement timeout, while the lease kit, having given up on it after one
 * interval, sent the next: each heartbeat stacked one more statement on the lock, each with its
 * connection (review 93 for the inbox, review 94 for the relay). See renewalLockWait for the value.
 */
export function renewalLockBound(param: string): string {
  return `set_config('lock_timeout', ${param}, true) IS NOT NULL`;
}

/**
 * The lock_timeout of a lease renewal (renewalLockBound): half the heartbeat interval, the
 * renewal's deadline, so the wait ends, and the statement answers, before the kit gives up on it
 * and sends the next one.
 */
export function renewalLockWait(heartbeatIntervalMs: number): string {
  return `${Math.max(1, Math.floor(heartbeatIntervalMs / 2))}ms`;
}

/**
 * Sends one renewal statement (`send`, given the statement's options) so that its promise settles
 * once the statement no longer runs, not merely once ferry gave up on it: the lease kit counts a
 * renewal in flight until then (RENEWALS_IN_FLIGHT_AT_MOST), and a late answer still proves the
 * lease from when the renewal was sent. `signal` is the kit giving up on the renewal. An executor
 * that stops waiting at it (withStatementDeadline) fails the call at once while the statement
 * may still run; the call then settles with the statement's own answer, however late
 * (StatementOptions.onAbandoned), or with that failure once the statement has ended:
 * - Prisma cannot abort it: it keeps its pooled connection until PostgreSQL answers;
 * - fromPg closes its connection, which frees the pool's place at once, but PostgreSQL does not
 *   notice a closed connection while it runs a statement: the backend goes on with it. That
 *   backend (StatementOptions.onBackend) is ended (endBackend, waiting up to a heartbeat interval
 *   for it to exit), so abandoned renewals do not pile up on the server either. A failure to end
 *   it (a role that may not, PostgreSQL before 14) is ignored: the renewal's own failure stands.
 */
export async function renewalStatement<T>(
  db: SqlExecutor,
  lease: RenewalTiming,
  signal: AbortSignal | undefined,
  send: (options: StatementOptions) => Promise<T>,
): Promise<T> {
  let late: { ended: Promise<boolean>; answer: Promise<unknown> } | undefined;
  let backend: { pid: number; sentAt: number } | undefined;
  try {
    return await send({
      signal,
      onAbandoned: (ended, answer) => void (late = { ended, answer }),
      onBackend: (running) => void (backend = running),
    });
  } catch (error) {
    if (late !== undefined) {
      // The statement's own promise: of type T, as `send`'s.
      const answered = await late.answer.then(
        (value) => ({ value: value as T }),
        () => undefined,
      );
      if (answered !== undefined) return answered.value;
    }
    if (!(late === undefined ? false : await late.ended) && backend !== undefined) {
      const { pid, sentAt } = backend;
      await endBackend(db, pid, performance.now() - sentAt, lease.heartbeatIntervalMs).catch(() => false);
    }
    throw error;
  }
}
