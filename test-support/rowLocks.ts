/** Row locks another session holds, and the statements that wait on them (review 93, 94). */
import { Client } from 'pg';
import type { SqlExecutor } from '@ferry/core';

/**
 * Locks the rows `ids` of `table` FOR UPDATE in a session of its own (an operator's open
 * transaction) until the returned end() runs.
 */
export async function lockRows(
  url: string,
  table: 'ferry_inbox_receipts' | 'outbox_events',
  ids: readonly string[],
): Promise<{ end(): Promise<void> }> {
  const locker = new Client({ connectionString: url });
  // Ended by a test that terminates backends: the statement fails, never the test file.
  locker.on('error', () => undefined);
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`SELECT 1 FROM ${table} WHERE id = ANY($1::uuid[]) FOR UPDATE`, [ids]);
  return {
    end: async () => {
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}

/** Statements of `db`'s database whose text holds `marker`, waiting on a lock now. */
async function waitingOnLock(db: SqlExecutor, marker: string): Promise<number> {
  const [row] = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, $1) > 0`,
    [marker],
  );
  return Number(row?.n ?? 0);
}

/**
 * The most lease renewals a test sees waiting on one held lock at once when their wait is bounded
 * (lease/renewalLock.ts). Bounded, one waits; for a moment two, when a loaded server reaches the
 * lock late (the bound, half a heartbeat interval, runs from the start of the wait, and the kit
 * sends the next renewal one interval after the last was sent: a full CI run saw two once).
 * Unbounded, every heartbeat of the hold stacks one more (14 in review 93's tests).
 */
export const RENEWALS_WAITING_AT_MOST = 2;

/** Samples the statements holding `marker` that wait on a lock until `done()`; resolves the most seen at once. */
export async function mostWaitingOnLock(
  db: SqlExecutor,
  marker: string,
  done: () => boolean,
): Promise<number> {
  let most = 0;
  while (!done()) {
    most = Math.max(most, await waitingOnLock(db, marker));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return most;
}

/**
 * Locks `table` ACCESS EXCLUSIVE in a session of its own (an operator's migration holding it)
 * until the returned end() runs: every statement on it (an acceptance's insert) waits meanwhile.
 */
export async function lockTable(url: string, table: string): Promise<{ end(): Promise<void> }> {
  const locker = new Client({ connectionString: url });
  // Ended by a test that terminates backends: the statement fails, never the test file.
  locker.on('error', () => undefined);
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  let ended = false;
  return {
    end: async () => {
      if (ended) return;
      ended = true;
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}
