/**
 * Review 61: the half-open probe (sql/probeClaim.ts) has no key scan. A healthy destination's
 * first due rows that are blocked behind their key (here a key whose head is FAILED under the
 * default failedHead 'block') fill the probe's row budget for it (max(2 × probeBatchSize,
 * 1,000 / destinations read)), so its ready events of other keys are never read; step 2 then
 * probes the dead destination, which refuses again, so the circuit never closes and the closed
 * claim (whose key scan would find them at once) never runs again. docs/outbox.md (Broker
 * outages) leaves such an event out of its bound ("Provided it is among the due rows the probe
 * reads"), but does not say that it then waits for as long as the other destination is down,
 * however small that destination's backlog (50 rows here).
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

it("a key blocked behind its FAILED head in a healthy queue: the queue's other keys wait for as long as another queue is down", async () => {
  // What a user sees: 'orders' is healthy; one of its keys ('customer-42') has a FAILED head
  // (failedHead 'block', the default) and 1,000 events queued behind it, waiting for an operator.
  // A second queue, 'audit', goes down with 50 events. From then on no new 'orders' event of any
  // other customer is published (not within 100 probes; with the open period capped at 30 s, not
  // for as long as 'audit' stays down), although the broker takes 'orders' throughout. Without the
  // outage the relay's claim finds them at once (its key scan).
  await t.db.execute('DELETE FROM outbox_events');
  await emitMany(
    t.db,
    Array.from({ length: 50 }, (_, i) => ({ type: 'audit', destination: 'audit', payload: { i } })),
  );
  const blocked = await emitMany(
    t.db,
    Array.from({ length: 1_001 }, (_, i) => ({
      type: 'order',
      destination: 'orders',
      orderingKey: 'customer-42',
      payload: { i },
    })),
  );
  await t.db.execute(
    `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), last_error = 'poison', retry_count = max_retries WHERE id = $1`,
    [blocked.ids[0]],
  );
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      message.destination === 'audit' ? { unavailable: 'queue audit unreachable' } : 'sent',
  });
  const { relay, advance } = clockedRelay(t.db, publisher, { batchSize: 20 });
  try {
    // The closed claim takes 20 'audit' rows, all refused: the circuit opens.
    await relay.runOnce();
    expect(relay.circuit).not.toBe('closed');
    const ready = await emit(t.db, {
      type: 'order',
      destination: 'orders',
      orderingKey: 'customer-7',
      payload: {},
    });
    const waited = await cyclesUntilDelivered(relay, publisher, ready.id, advance, 100);
    // What the bound gives an event heading its key (failureThreshold 1): 2 cycles.
    expect(waited).toBeLessThanOrEqual(2);
  } finally {
    await relay.close();
  }
}, 300_000);
