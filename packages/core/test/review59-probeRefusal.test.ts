/**
 * Review 59: the half-open probe past refused destinations (sql/probeClaim.ts, unavailableHold.ts)
 * still makes a healthy destination's events wait for a dead destination's whole backlog (not
 * published within 200 cycles; 3,000 dead rows walked one probe each): in two cases the documented
 * bound covers (docs/outbox.md, Broker outages: ⌈k / probeBatchSize⌉ × (failureThreshold + 1)
 * cycles, plus one probe per further 100 destinations), and in a third it excludes ("unless
 * earlier ones wait behind their keys"), the common layout of one key across destinations.
 *
 * Setup as test/outbox/deadDestinationBound.test.ts: a fake publisher (`unavailable` per
 * destination), the real relay on PostgreSQL, the breaker's clock injected (an open period passes
 * at once), one relay cycle at a time; 3,000 rows of 'queue-down' (the broker refuses it
 * throughout), emitted before anything else; the healthy events go to 'queue-up'.
 */
import { createRelay, emit, emitMany, type OutboxMessage, type OutboxOptions } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { clockedRelay, cyclesUntilDelivered, silent } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

const DEAD = 3_000;

async function emitDeadBacklog(): Promise<void> {
  for (let i = 0; i < DEAD; i += 500)
    await emitMany(
      t.db,
      Array.from({ length: 500 }, (_, j) => ({
        type: 'down',
        destination: 'queue-down',
        payload: { i: i + j },
      })),
    );
}

/** Runs cycles (the open period passing at once) until `id` is delivered; returns the cycles, or `max`. */
it('after a broker-wide blip, healthy destinations wait for the dead backlog: the refusal is never forgotten', async () => {
  // What a user sees: one queue is dead (AccessDenied) with a backlog; the broker then has a short
  // network blip (every publish `unavailable` for two cycles) and comes back for every other queue.
  // Events of the healthy queue emitted after the blip are not published for hundreds of cycles
  // (with openMs 1 s doubling to 30 s, hours): the blip put 'queue-up' on the relay's refused list,
  // it leaves it only when a publish of it is answered, and no probe claims it while any refused
  // row is older (the fallback takes the oldest due row: the dead backlog, one probe at a time).
  // Expected: the documented bound, (failureThreshold + 1) cycles per event, however long the dead
  // backlog (a restarted relay, which forgot the blip, publishes both waiting healthy events within 4 cycles).
  await emitDeadBacklog();
  let blip = false;
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      blip || message.destination === 'queue-down' ? { unavailable: 'connection reset' } : 'sent',
  });
  let now = 1_000_000;
  const options: OutboxOptions = { batchSize: 20 };
  const relay = createRelay({ db: t.db, publisher, logger: silent, clock: () => now, options });
  const advance = () => {
    now += relay.options.circuit.maxOpenMs + 1;
  };
  try {
    // Before the blip the probe reaches 'queue-up' as designed.
    const before = await emit(t.db, { type: 'up', destination: 'queue-up', payload: { n: 0 } });
    expect(await cyclesUntilDelivered(relay, publisher, before.id, advance, 50)).toBeLessThanOrEqual(3);
    // The blip: every destination unavailable while a 'queue-up' event is in a cycle.
    blip = true;
    const during = await emit(t.db, { type: 'up', destination: 'queue-up', payload: { n: 1 } });
    for (let cycle = 0; cycle < 5; cycle += 1) {
      if (relay.circuit === 'open') advance();
      await relay.runOnce();
    }
    expect(publisher.attempts.some((m) => m.id === during.id)).toBe(true);
    blip = false;
    // The broker is back for everything but 'queue-down'.
    const after = await emit(t.db, { type: 'up', destination: 'queue-up', payload: { n: 2 } });
    const waited = await cyclesUntilDelivered(relay, publisher, after.id, advance, 200);
    await relay.close();
    // The same rows, a new relay (it never saw the blip): both healthy events go out at once.
    const restarted = createRelay({ db: t.db, publisher, logger: silent, clock: () => now, options });
    let restartedWaited: number;
    try {
      restartedWaited = await cyclesUntilDelivered(restarted, publisher, after.id, advance, 200);
    } finally {
      await restarted.close();
    }
    // Two healthy events due (k = 2), probeBatchSize 1, failureThreshold 1: 2 × 2 cycles.
    expect(restartedWaited).toBeLessThanOrEqual(2 * 2);
    expect(waited).toBeLessThanOrEqual(2 * 2);
  } finally {
    await relay.close();
  }
}, 120_000);

it('with 200 destinations whose rows all wait a retry back-off, the probe never visits the healthy one', async () => {
  // What a user sees: 200 tenant queues each hold one event waiting out a retry back-off (the
  // broker answered `retryable`), one queue is dead with a backlog, and the events of a healthy
  // queue whose name sorts after them are not published until the dead backlog has been walked one
  // probe at a time (here: not within 200 cycles). docs/outbox.md promises one more probe per
  // further 100 destinations: 2 more here. The probe's round-robin cursor never gets past the
  // second hundred: a visit from the cursor that finds nothing starts over from the first
  // destination and keeps that visit's cursor (the 101st destination), so the next visit starts
  // at the 101st again.
  await emitMany(
    t.db,
    Array.from({ length: 200 }, (_, i) => ({
      type: 'tenant',
      destination: `a-tenant-${String(i).padStart(3, '0')}`,
      payload: { i },
    })),
  );
  const retrying = new InMemoryPublisher({ decide: () => ({ retryable: 'throttled' }) });
  const setup = createRelay({
    db: t.db,
    publisher: retrying,
    logger: silent,
    options: { batchSize: 500, retry: { initialDelay: 3_600_000, maxDelay: 3_600_000 } },
  });
  try {
    await setup.runOnce();
  } finally {
    await setup.close();
  }
  const [waiting] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'PENDING' AND next_attempt_at > now()`,
  );
  expect(waiting?.n).toBe(200);
  await emitDeadBacklog();
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      message.destination === 'queue-down' ? { unavailable: 'AccessDenied on queue-down' } : 'sent',
  });
  const { relay, advance } = clockedRelay(t.db, publisher, { batchSize: 20 });
  try {
    const healthy = await emit(t.db, { type: 'up', destination: 'queue-up', payload: {} });
    const waited = await cyclesUntilDelivered(relay, publisher, healthy.id, advance, 200);
    // (failureThreshold + 1) cycles, plus a probe per further 100 of the 202 destinations.
    expect(waited).toBeLessThanOrEqual(2 + 3);
  } finally {
    await relay.close();
  }
}, 120_000);

it('keys spanning a dead and a healthy destination: an unblocked healthy event waits for the dead backlog', async () => {
  // What a user sees: each order's events go to 'billing' (dead: AccessDenied, 3,000 rows) and then
  // to 'shipping' (healthy), keyed by order. The shipping events of those orders rightly wait for
  // their billing event; but a shipping event of another key, ready to go, emitted after two of
  // them, is not published within 200 cycles (it waits for the dead backlog, one probe a row). The
  // probe reads only the first 2 × probeBatchSize due rows of a destination (probeClaim.ts, $4),
  // both blocked here, then falls back to the oldest due row (billing's). docs/outbox.md excludes
  // this case from its bound ("unless earlier ones wait behind their keys"), which leaves the bound
  // hollow for the common layout of one key across destinations.
  // Expected: within (failureThreshold + 1) cycles, as for any healthy event heading its key.
  for (let i = 0; i < DEAD; i += 500)
    await emitMany(
      t.db,
      Array.from({ length: 500 }, (_, j) => ({
        type: 'billing',
        destination: 'billing',
        orderingKey: `order-${i + j}`,
        payload: { i: i + j },
      })),
    );
  await emitMany(
    t.db,
    [0, 1].map((i) => ({
      type: 'shipping',
      destination: 'shipping',
      orderingKey: `order-${i}`,
      payload: { i },
    })),
  );
  const ready = await emit(t.db, {
    type: 'shipping',
    destination: 'shipping',
    orderingKey: 'order-new',
    payload: {},
  });
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      message.destination === 'billing' ? { unavailable: 'AccessDenied on billing' } : 'sent',
  });
  const { relay, advance } = clockedRelay(t.db, publisher, { batchSize: 20 });
  try {
    const waited = await cyclesUntilDelivered(relay, publisher, ready.id, advance, 200);
    expect(waited).toBeLessThanOrEqual(2);
  } finally {
    await relay.close();
  }
}, 120_000);
