/**
 * A column (with its leading comma) that turns synchronous_commit off for the transaction of the
 * statement that selects it (set_config(..., true): that transaction only), so its COMMIT does not
 * wait for the WAL to be flushed. Selected by the relay's claim, on a root executor only.
 *
 * Why the relay's claim may commit so: it takes leases and counts no retry, and nothing it starts
 * outside PostgreSQL is undone or counted by it. A PostgreSQL crash can forget a claim whose WAL
 * was not flushed yet (within about 3 x wal_writer_delay, 0.6 s by default); its events are then due
 * again and are published again, which is what the same crash does to a durable claim too (the
 * relay cannot mark SENT while PostgreSQL is down, and lease recovery hands the rows back). What
 * follows the claim commits durably (the SENT mark, a retry, FAILED), and PostgreSQL flushes WAL in
 * order, so those commits flush the claim with them.
 *
 * Not for the inbox worker's claim: its handler runs under the claim before anything else commits,
 * so a forgotten claim would give the handler a run its attempts never counted (review 69:
 * worker.maxAttempts bounds handler runs, crashes included).
 *
 * Only on a root executor (`!db.inTransaction`), where the statement is a transaction of its own:
 * inside a transaction of the caller's (a relay given an executor bound to one) it would make the
 * caller's writes non-durable too, so the statement is sent without it there.
 */
export const LEASE_COMMIT_COLUMN = `, (SELECT set_config('synchronous_commit', 'off', true)) AS lease_commit`;
