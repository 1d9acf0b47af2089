/**
 * The bound of a lease renewal's wait for a row lock, one home for the inbox worker's renewals
 * (inbox/sql/renewLease.ts, renewQueued.ts) and the relay's (outbox/sql/renewLease.ts).
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
