/**
 * The relay's lease renewals that the database leaves unanswered, on Prisma (the lease kit,
 * lease/heartbeat.ts; the inbox worker's: test/inbox/renewalsInFlight.test.ts). A renewal the kit
 * gave up on keeps running, and its pooled connection, until the database answers: one more every
 * heartbeat stacked up to (duration - heartbeatInterval) / heartbeatInterval per batch in flight.
 * The kit keeps at most two of one lease in flight.
 */
import { emit, fromPrisma } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { gate } from '../../../../test-support/holds';
import { holdRenewals } from '../../../../test-support/heldRenewals';
import { waitUntil } from '@ferry/testing';
import { RENEWALS_IN_FLIGHT_AT_MOST } from '../../src/lease/heartbeat';
import { heldPublisher, relay } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

test("the relay's lease: at most two renewal statements at once, and the lease is lost at its local expiry", async () => {
  // Room for every renewal main sent, (3,000 - 300) / 300 of them, and the relay's own statements.
  const prisma = t.newClient({ max: 12 });
  const holds = await holdRenewals(t.db, 'outbox_events', 'all');
  await emit(t.db, { type: 'a', payload: { n: 0 } });
  const publishing = gate();
  let reason: unknown;
  const r = relay(
    fromPrisma(prisma),
    heldPublisher(publishing.open, (why) => (reason = why)),
    {
      // Failed renewals tolerated past the local expiry: the lease is lost by its expiry.
      lease: { duration: 3_000, heartbeatInterval: 300, heartbeatFailureTolerance: 9 },
      statementTimeout: 60_000,
    },
  );
  const run = r.runOnce();
  try {
    await publishing.promise;
    await waitUntil('the lease to be lost', async () => reason !== undefined, { timeoutMs: 30_000 });
    expect(reason).toMatchObject({ code: 'FERRY_LEASE_LOST', details: { reason: 'expired' } });
    // Every renewal sent is held for good: none answered, none can have ended.
    await waitUntil('the renewals sent to be held', async () => (await holds.held()) >= 2, {
      timeoutMs: 15_000,
    });
    expect(await holds.sent()).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
    expect(await holds.held()).toBe(RENEWALS_IN_FLIGHT_AT_MOST);
  } finally {
    await holds.release();
  }
  await run;
  await r.close();
});
