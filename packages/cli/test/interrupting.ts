/**
 * Helpers of the tests that interrupt the real binary (SIGINT / SIGTERM) while its change waits
 * on a lock another session of the test holds.
 */
import { Client } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import type { TestDatabase } from '../../../test-support/database';
import type { BinaryRun } from './binary';

/** Generous bounds: each is only reached when the behaviour under test is missing. */
export const BOUND_MS = 20_000;

/** The note the CLI prints on stderr when the first signal arrives. */
export const STOPPING = /: SIG(INT|TERM): stopping after the change in flight/;

/** Another session of `t` holding the locks `sql` takes until release(). */
export async function holding(t: TestDatabase, sql: string, values: unknown[] = []) {
  const client = listened(new Client({ connectionString: t.url }));
  await client.connect();
  await client.query('BEGIN');
  await client.query(sql, values);
  return {
    release: async () => {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    },
  };
}

/** True once a session of the test database waits on a lock (the command's change in flight). */
export async function someoneWaitsOnALock(t: TestDatabase): Promise<boolean> {
  for (const stop = Date.now() + BOUND_MS; Date.now() < stop;) {
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if ((row?.n ?? 0) > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Sends `signal` once the command's change waits on the lock, and waits for its stopping note. */
export async function interruptInFlight(
  t: TestDatabase,
  run: BinaryRun,
  signal: NodeJS.Signals,
): Promise<boolean> {
  if (!(await someoneWaitsOnALock(t))) return false;
  run.child.kill(signal);
  return run.stderrLine(STOPPING, BOUND_MS);
}

/**
 * Signals `run` twice while its change waits on a lock: the first is noted, the second ends
 * `ferry <command>` at once (130 for SIGINT, 143 for SIGTERM) with nothing on stdout.
 */
export async function expectSecondSignalExits(
  t: TestDatabase,
  run: BinaryRun,
  signal: 'SIGINT' | 'SIGTERM',
  command: string,
): Promise<void> {
  const noted = await interruptInFlight(t, run, signal);
  run.child.kill(signal);
  const ended = await run.ended(BOUND_MS);
  const code = signal === 'SIGINT' ? 130 : 143;
  expect({ noted, ended }).toEqual({ noted: true, ended: { code, signal: null, hung: false } });
  expect(run.stdout()).toEqual([]);
  expect(run.stderr().at(-1)).toMatch(new RegExp(`^ferry ${command}: ${signal} again: exiting at once`));
}
