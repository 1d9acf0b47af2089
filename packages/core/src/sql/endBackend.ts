import type { SqlExecutor } from './executor';

/**
 * Ends backend `$1` if it still runs (pg_terminate_backend, waiting up to $3 ms for it to exit:
 * PostgreSQL 14 or later) and says whether it is gone. Gone, its transaction is over: committed
 * (and visible to any later statement) or rolled back; nothing it was running can commit later.
 *
 * Only a backend started at least $2 ms ago (when the statement to end was sent), of this
 * session's database and role (as every connection of the pool that ran it), is ended: a backend
 * that took over the process id after the one to end exited is left alone, and so is another
 * database's or role's session under a process id that was never the pool's (a connection
 * pooler such as pgbouncer hands its clients process ids of its own).
 *
 * pg_terminate_backend is called in the select list of the one row pg_stat_get_activity($1)
 * returns, never in a WHERE clause: there the planner orders the conditions by cost, and it put
 * the call before `pid = $1`, ending every session of the server (every database) it came to.
 */
const END_BACKEND = `
  SELECT coalesce((
    SELECT pg_terminate_backend(a.pid, $3::bigint)
    FROM pg_stat_get_activity($1::int) a, pg_stat_get_activity(pg_backend_pid()) me
    WHERE a.pid = $1::int AND a.pid <> pg_backend_pid()
      AND a.datid = me.datid AND a.usesysid = me.usesysid
      AND a.backend_start <= now() - ($2::bigint * interval '1 millisecond')
  ), true) AS gone`;

/**
 * True once the backend `pid` no longer runs. False when it did not exit within `waitMs`; fails
 * (SQLSTATE 42501, 42883) when the role may not end it or PostgreSQL is older than 14.
 */
export async function endBackend(
  db: SqlExecutor,
  pid: number,
  sentAgoMs: number,
  waitMs: number,
): Promise<boolean> {
  const [row] = await db.query<{ gone: boolean }>(END_BACKEND, [
    pid,
    Math.max(0, Math.floor(sentAgoMs)),
    waitMs,
  ]);
  return row?.gone === true;
}
