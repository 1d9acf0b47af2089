/**
 * Review 94: the relay's lease renewal, like the inbox worker's (review 93,
 * test/inbox/review93-renewalDeadline.test.ts), must end with its deadline in the lease kit. A
 * renewal blocked by a row lock another session holds on an outbox row (an operator's open
 * transaction, `SELECT ... FOR UPDATE` on outbox_events) is abandoned by the kit, which sends the
 * next one an interval later; left waiting until statementTimeout, every heartbeat added one more
 * statement waiting on the same lock, each holding a connection of the application's pool.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { emitMany, fromPg } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { gate } from '../../../../test-support/holds';
import { lockRows, mostWaitingOnLock, RENEWALS_WAITING_AT_MOST } from '../../../../test-support/rowLocks';
import { heldPublisher, relay } from './helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 30 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** The text of the relay's renewal statement (renewLease). */
const RENEWAL = 'UPDATE outbox_events e SET lease_expires_at = now()';

test("the relay's lease: renewals do not stack on a lock held by another session", async () => {
  const { ids } = await emitMany(t.db, [
    { type: 'a', payload: { n: 0 } },
    { type: 'b', payload: { n: 1 } },
  ]);
  const publishing = gate();
  let aborted = false;
  const r = relay(
    fromPg(pool),
    heldPublisher(publishing.open, () => (aborted = true)),
    {
      // Fourteen failed renewals tolerated: the lease is lost by its local expiry or the 15th.
      lease: { duration: 4_000, heartbeatInterval: 250, heartbeatFailureTolerance: 15 },
      statementTimeout: 60_000,
    },
  );
  const run = r.runOnce();
  await publishing.promise;
  const lock = await lockRows(t.url, 'outbox_events', ids);
  try {
    expect(await mostWaitingOnLock(t.db, RENEWAL, () => aborted)).toBeLessThanOrEqual(
      RENEWALS_WAITING_AT_MOST,
    );
  } finally {
    await lock.end();
  }
  await run;
  await r.close();
});
