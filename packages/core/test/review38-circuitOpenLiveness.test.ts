/**
 * Review 38: liveness reports a healthy relay down while its broker circuit is open for longer than
 * maxCycleAgeMs.
 *
 * While the circuit is open the relay's loop waits `breaker.remainingOpenMs()` instead of
 * `pollInterval` (relay.ts run()), and its last cycle (claimLimit 0) was at the start of that wait.
 * createHealth's liveness allows maxCycleAgeMs past `pollIntervalMs` only (health/createHealth.ts
 * loop()), so once the open period exceeds maxCycleAgeMs + pollInterval the relay is reported
 * down ("last cycle N ms ago") although it is waiting on schedule and will probe the broker when the
 * period ends. `circuit.openMs` / `circuit.maxOpenMs` accept up to 2^31-1 ms; with e.g. openMs
 * 120,000 and the default maxCycleAgeMs 60,000, every broker outage longer than a minute flips
 * liveness to down.
 *
 * Contract: README "Health": maxCycleAgeMs is counted "past its poll interval ... an idle loop
 * polling on schedule is up however long its interval"; "Liveness reads no database (a slow
 * database does not get a healthy process restarted)": liveness is meant to catch a stuck loop.
 *
 * Why it matters: a Kubernetes liveness probe restarts every relay pod during a broker outage (a
 * restart storm that recovers nothing: the circuit exists to wait the outage out).
 *
 * Fix direction: count the bound from when the next cycle is due (expose the open circuit's wait,
 * e.g. a `nextCycleDueAt` / pollIntervalMs that includes remainingOpenMs, on the LoopSource).
 */
import { createHealth, createRelay, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { silent, waitFor } from './outbox/helpers';

const MAX_CYCLE_AGE_MS = 1_000;
const OPEN_MS = 10_000;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a relay waiting out its open circuit on schedule is live', async () => {
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher({ decide: () => ({ unavailable: 'broker down' }) }),
    logger: silent,
    options: { pollInterval: 50, circuit: { openMs: OPEN_MS, maxOpenMs: OPEN_MS } },
  });
  await emit(t.db, { type: 'review38.circuit', payload: {} });
  relay.start();
  try {
    await waitFor(() => relay.circuit === 'open');
    const health = createHealth({ db: t.db, relay, maxCycleAgeMs: MAX_CYCLE_AGE_MS });
    // Well past maxCycleAgeMs + pollInterval, well before the open period ends.
    await new Promise((resolve) => setTimeout(resolve, MAX_CYCLE_AGE_MS * 3));
    expect(relay.circuit).toBe('open');
    expect(relay.state).toBe('running');
    expect(await health.liveness()).toMatchObject({
      status: 'up',
      checks: [{ name: 'relay', status: 'up' }],
    });
  } finally {
    await relay.close();
  }
}, 30_000);
