/**
 * Review 46: the half-open probe still starves a healthy destination behind a dead one, in two
 * cases of the class review 45 fixed (unavailableHold.ts).
 *
 * What I did: as review45-probeStarvation.test.ts, 20 events for a destination the broker cannot
 * take (`unavailable`) and one for a healthy destination, the relay probing each time the open
 * period has passed (a manual clock); the healthy event is emitted once the circuit is open.
 * (1) The dead destination's backlog is larger than a batch: `batchSize: 5` stands for the default
 *     500 with the review's "backlog of 1,000 rows". (2) `circuit.failureThreshold: 2`: the circuit
 *     opens on the second all-unavailable cycle.
 *
 * What happened: UnavailableHold remembers only the rows handed back unavailable by a cycle the
 * breaker heard while it was open (or the cycle that opened it). (1) The 15 dead rows the opening
 * cycle did not claim, (2) the 10 dead rows the first, still-closed cycle handed back (held.clear()
 * while the circuit is closed) are due before the healthy event, so each half-open probe takes one
 * of them, fails and reopens the circuit for longer: 15 and 10 failed probes before the healthy
 * event is published. With the defaults (openMs 1 s doubling to 30 s) and a 1,000-row backlog that
 * is 500 probes, about four hours, while the broker answers for the healthy destination.
 *
 * What should happen (CHANGELOG, Relay liveness: "after a failed half-open probe the rows handed
 * back unavailable in the outage now go behind every row due ... so another destination's event
 * waits at most two probes"; docs/outbox.md: events of a destination that stays unavailable do not
 * hold back those of the others): the healthy event is published within two failed probes.
 *
 * Fix direction: remember the rows of every all-unavailable cycle since the last reachable answer
 * (not only while open), and once a probe failed, let the next probe prefer rows never found
 * unavailable in this outage over untried rows of a destination that just failed (e.g. hold back,
 * or probe by destination: the failed probe's destination's due rows go behind the others).
 */
import { createRelay, emit, emitMany, type OutboxMessage, type OutboxOptions } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent, statusOf } from './outbox/helpers';

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

/** Failed probes before the healthy event is sent (at most 30 tried). */
async function failedProbesBeforeHealthy(options: OutboxOptions, cyclesToOpen: number): Promise<number> {
  await emitMany(
    t.db,
    Array.from({ length: 20 }, (_, i) => ({ type: 'down', destination: 'queue-down', payload: { i } })),
  );
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      message.destination === 'queue-down' ? { unavailable: 'AccessDenied on queue-down' } : 'sent',
  });
  let now = 1_000_000;
  const relay = createRelay({ db: t.db, publisher, logger: silent, clock: () => now, options });
  try {
    for (let cycle = 0; cycle < cyclesToOpen; cycle += 1) {
      expect(relay.circuit).toBe('closed');
      expect(await relay.runOnce()).toMatchObject({ sent: 0 });
    }
    expect(relay.circuit).toBe('open');
    const { id } = await emit(t.db, { type: 'up', destination: 'queue-up', payload: {} });
    let failedProbes = 0;
    for (let probe = 0; probe < 30; probe += 1) {
      now += 60_000; // past any open period (maxOpenMs 30 s)
      expect(relay.circuit).toBe('half-open');
      const result = await relay.runOnce();
      if (result.sent > 0) break;
      failedProbes += result.unavailable;
    }
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'SENT' });
    return failedProbes;
  } finally {
    await relay.close();
  }
}

it('reaches the healthy destination within two probes when the dead backlog is larger than a batch', async () => {
  // On main: 15 (one failed probe per dead row the opening cycle did not claim).
  expect(await failedProbesBeforeHealthy({ batchSize: 5 }, 1)).toBeLessThanOrEqual(2);
}, 30_000);

it('reaches the healthy destination within two probes when the circuit opened on a later cycle', async () => {
  // On main: 10 (the rows the first, still-closed cycle handed back are never held back).
  expect(
    await failedProbesBeforeHealthy({ batchSize: 10, circuit: { failureThreshold: 2 } }, 2),
  ).toBeLessThanOrEqual(2);
}, 30_000);
