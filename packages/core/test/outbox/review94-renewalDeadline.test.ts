/**
 * Review 94: the relay's lease renewal, like the inbox worker's (review 93,
 * test/inbox/review93-renewalDeadline.test.ts), must end with its deadline in the lease kit. A
 * renewal blocked by a row lock another session holds on an outbox row (an operator's open
 * transaction, `SELECT ... FOR UPDATE` on outbox_events) is abandoned by the kit, which sends the
 * next one an interval later; left waiting until statementTimeout, every heartbeat added one more
 * statement waiting on the same lock, each holding a connection of the application's pool.
 */
import { Client, Pool } from 'pg';
import { emitMany, fromPg, type OutboxMessage, type Publisher, type PublishOutcome } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay } from './helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = new Pool({ connectionString: t.url, max: 30 });
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** The relay's renewal statements (renewLease) of this database waiting on a lock now. */
async function waitingRenewals(): Promise<number> {
  const [row] = await t.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock'
       AND query LIKE '%UPDATE outbox_events e SET lease_expires_at = now()%'`,
  );
  return Number(row?.n ?? 0);
}

/** Locks the outbox rows `ids` FOR UPDATE in a session of its own until the returned end() runs. */
async function lockRows(ids: readonly string[]): Promise<{ end(): Promise<void> }> {
  const locker = new Client({ connectionString: t.url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('SELECT 1 FROM outbox_events WHERE id = ANY($1::uuid[]) FOR UPDATE', [ids]);
  return {
    end: async () => {
      await locker.query('ROLLBACK');
      await locker.end();
    },
  };
}

/** Samples waitingRenewals() until `done()`; resolves the most seen at once. */
async function mostWaiting(done: () => boolean): Promise<number> {
  let most = 0;
  while (!done()) {
    most = Math.max(most, await waitingRenewals());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return most;
}

/** A publisher that never answers on its own: it tells `started`, then waits for its signal. */
function heldPublisher(started: () => void, ended: () => void): Publisher {
  return {
    publish: (_messages: readonly OutboxMessage[], signal?: AbortSignal) =>
      new Promise<readonly PublishOutcome[]>((resolve) => {
        started();
        signal?.addEventListener(
          'abort',
          () => {
            ended();
            resolve([]);
          },
          { once: true },
        );
      }),
  };
}

test("the relay's lease: at most one renewal waits on a lock held by another session", async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: { n: 0 } },
    { type: 'b', payload: { n: 1 } },
  ]);
  let started!: () => void;
  const publishing = new Promise<void>((resolve) => (started = resolve));
  let aborted = false;
  const r = relay(
    fromPg(pool),
    heldPublisher(started, () => (aborted = true)),
    {
      // Fourteen failed renewals tolerated: the lease is lost by its local expiry or the 15th.
      lease: { duration: 4_000, heartbeatInterval: 250, heartbeatFailureTolerance: 15 },
      statementTimeout: 60_000,
    },
  );
  const run = r.runOnce();
  await publishing;
  const lock = await lockRows(ids);
  try {
    expect(await mostWaiting(() => aborted)).toBeLessThanOrEqual(1);
  } finally {
    await lock.end();
  }
  await run;
  await r.close();
});
