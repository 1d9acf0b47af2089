/**
 * Review 61: the refused list's cap (unavailableHold.ts REFUSED_KEPT, 1,000). With one more dead
 * destination than the relay remembers, every half-open probe's step 1 (sql/probeClaim.ts)
 * finds the dead destination the list just forgot, claims its row (older than the healthy event)
 * instead of the healthy destination's, and the refusal that follows forgets the next one: the
 * healthy event waits failed probes that grow with the dead destinations (here 100 cycles; 271
 * with 2,500 dead destinations).
 * docs/outbox.md, Broker outages, promises (failureThreshold + 1) cycles plus one probe per
 * further 100 destinations: 2 + 10 here, whatever the cap.
 *
 * Setup as test/outbox/deadDestinationBound.test.ts: a fake publisher (`unavailable` per
 * destination), the real relay on PostgreSQL, the breaker's clock injected (an open period passes
 * at once), one relay cycle at a time.
 */
import { emit, emitMany, type OutboxMessage } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { clockedRelay, cyclesUntilDelivered } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('1,001 dead destinations (one past the refused list cap): a healthy event waits probes that grow with the dead destinations', async () => {
  // What a user sees: a multi-tenant app with a queue per tenant; 1,001 tenant queues are deleted
  // (AccessDenied / queue does not exist: `unavailable`), each with one event. An event of a live
  // queue emitted during the outage is not published for 100 probes (with openMs 1 s doubling to
  // 30 s: about 50 minutes; 271 probes with 2,500 dead queues), while with 1,000 dead queues it
  // goes out at the first probe. Each probe claims the dead queue the relay's refused list forgot
  // last (its row is older), whose refusal then forgets the next.
  await t.db.execute('DELETE FROM outbox_events');
  const DEAD = 1_001;
  await emitMany(
    t.db,
    Array.from({ length: DEAD }, (_, i) => ({
      type: 'tenant',
      destination: `tenant-${String(i).padStart(4, '0')}`,
      payload: { i },
    })),
  );
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      message.destination?.startsWith('tenant-') ? { unavailable: 'queue does not exist' } : 'sent',
  });
  const { relay, advance } = clockedRelay(t.db, publisher, { batchSize: 2_000 });
  try {
    // The closed claim takes every dead row: all refused, the circuit opens.
    await relay.runOnce();
    expect(relay.circuit).not.toBe('closed');
    // A live queue's event during the outage (its name sorts first: every visit reads it).
    const healthy = await emit(t.db, { type: 'live', destination: 'a-live-queue', payload: {} });
    const waited = await cyclesUntilDelivered(relay, publisher, healthy.id, advance, 300);
    // failureThreshold 1: 2 cycles, plus one probe per further 100 of the 1,002 destinations.
    expect(waited).toBeLessThanOrEqual(2 + 10);
  } finally {
    await relay.close();
  }
}, 300_000);
