/**
 * A relay whose circuit is open (its broker unavailable, or its publisher closed) is reported by
 * createHealth's details: a `relay circuit` check, down while the circuit is open or half-open,
 * naming since when, the error that opened it and when the relay probes the broker next; up
 * (`closed`) otherwise. Liveness and readiness do not read it (README "Health").
 *
 * What happened on main: details had no such check; every check was up (the relay waits out its
 * circuit on schedule, the database answers, the backlog is young) until the backlog's age
 * threshold tripped, 5 minutes later by default. Only the relay's warning said why.
 */
import { createHealth, createRelay, emit, type HealthCheck, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent, waitFor } from '../outbox/helpers';

const OPEN_MS = 60_000;
const CHECK = 'relay circuit';
const OPEN_DETAIL =
  /^open since (\S+) \((\d+) ms, opened 1 time\): (broker unavailable|publisher closed): (.+); next probe at (\S+) \(in (\d+) ms\)$/;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('TRUNCATE outbox_events');
});

function relayOn(publisher: InMemoryPublisher, openMs = OPEN_MS): Relay {
  return createRelay({
    db: t.db,
    publisher,
    logger: silent,
    options: { pollInterval: 20, circuit: { openMs, maxOpenMs: openMs } },
  });
}

async function circuitCheck(relay: Relay): Promise<HealthCheck | undefined> {
  const details = await createHealth({ db: t.db, relay }).details();
  return details.checks.find((check) => check.name === CHECK);
}

/** The open circuit's detail, read apart: since, cause, error, next probe. */
function openDetail(check: HealthCheck | undefined) {
  const match = OPEN_DETAIL.exec(check?.detail ?? '');
  if (match === null) throw new Error(`not an open circuit's detail: ${JSON.stringify(check)}`);
  const [, since, , cause, error, nextProbeAt] = match;
  return { since: Date.parse(since!), cause, error, nextProbeAt: Date.parse(nextProbeAt!) };
}

it('details report an open circuit down (since when, the error, the next probe); liveness and readiness stay up', async () => {
  const publisher = new InMemoryPublisher({
    decide: () => ({ unavailable: 'connect ECONNREFUSED broker:5672' }),
  });
  const relay = relayOn(publisher);
  await emit(t.db, { type: 'health.circuit', payload: {} });
  const startedAt = Date.now();
  relay.start();
  try {
    await waitFor(() => relay.circuit === 'open');
    const health = createHealth({ db: t.db, relay });
    const [live, ready, details] = await Promise.all([
      health.liveness(),
      health.readiness(),
      health.details(),
    ]);
    expect(live).toMatchObject({ status: 'up', checks: [{ name: 'relay', status: 'up' }] });
    expect(ready.status).toBe('up');
    expect(ready.checks.map((check) => check.name)).not.toContain(CHECK);
    // Everything else is up: the circuit is what is down.
    expect(details.checks.filter((check) => check.status === 'down').map((check) => check.name)).toEqual([
      CHECK,
    ]);
    expect(details.status).toBe('down');
    const open = openDetail(details.checks.find((check) => check.name === CHECK));
    expect(open.cause).toBe('broker unavailable');
    expect(open.error).toBe('connect ECONNREFUSED broker:5672');
    expect(open.since).toBeGreaterThanOrEqual(startedAt);
    expect(open.since).toBeLessThanOrEqual(Date.now());
    expect(open.nextProbeAt - open.since).toBe(OPEN_MS);
    expect(relay.circuitOutage).toEqual({
      state: 'open',
      since: new Date(open.since),
      error: 'connect ECONNREFUSED broker:5672',
      publisherClosed: false,
      openings: 1,
      nextProbeAt: new Date(open.nextProbeAt),
    });
  } finally {
    await relay.close();
  }
  // The circuit ends with the relay.
  expect(relay.circuitOutage).toBeNull();
  expect(await circuitCheck(relay)).toEqual({ name: CHECK, status: 'up', detail: 'closed' });
}, 30_000);

it('a relay on a closed publisher: the check says "publisher closed" with its closed answer', async () => {
  const publisher = new InMemoryPublisher();
  await publisher.close();
  const relay = relayOn(publisher);
  await emit(t.db, { type: 'health.closedPublisher', payload: {} });
  relay.start();
  try {
    await waitFor(() => relay.circuit === 'open');
    const open = openDetail(await circuitCheck(relay));
    expect(open.cause).toBe('publisher closed');
    expect(open.error).toMatch(/publisher is closed$/);
    expect(relay.circuitOutage).toMatchObject({ state: 'open', publisherClosed: true, openings: 1 });
  } finally {
    await relay.close();
  }
}, 30_000);

it('the check is up ("closed") before the circuit opens, down while open, up again once a probe is answered', async () => {
  let unavailable = true;
  const publisher = new InMemoryPublisher({
    decide: () => (unavailable ? { unavailable: 'broker down' } : 'sent'),
  });
  const relay = relayOn(publisher, 200);
  try {
    expect(await circuitCheck(relay)).toEqual({ name: CHECK, status: 'up', detail: 'closed' });
    await emit(t.db, { type: 'health.reopen', payload: {} });
    relay.start();
    await waitFor(() => relay.circuit !== 'closed');
    expect(await circuitCheck(relay)).toMatchObject({
      status: 'down',
      detail: expect.stringMatching(/broker down/),
    });
    unavailable = false;
    await waitFor(() => publisher.delivered.length === 1 && relay.circuit === 'closed');
    expect(await circuitCheck(relay)).toEqual({ name: CHECK, status: 'up', detail: 'closed' });
  } finally {
    await relay.close();
  }
}, 30_000);

it('half-open: the check is down while the probe is due, saying since when', async () => {
  let offset = 0;
  const relay = createRelay({
    db: t.db,
    publisher: new InMemoryPublisher({ decide: () => ({ unavailable: 'broker down' }) }),
    logger: silent,
    clock: () => Date.now() + offset,
    options: { circuit: { openMs: OPEN_MS, maxOpenMs: OPEN_MS } },
  });
  try {
    await emit(t.db, { type: 'health.halfOpen', payload: {} });
    await relay.runOnce();
    expect(relay.circuit).toBe('open');
    offset = OPEN_MS;
    expect(relay.circuit).toBe('half-open');
    const outage = relay.circuitOutage;
    expect(outage).toMatchObject({ state: 'half-open', error: 'broker down', openings: 1 });
    expect((await circuitCheck(relay))?.detail).toMatch(
      new RegExp(
        `^half-open since ${outage!.since.toISOString()} \\(\\d+ ms, opened 1 time\\): broker unavailable: broker down; probing the broker since ${outage!.nextProbeAt.toISOString()}$`,
      ),
    );
  } finally {
    await relay.close();
  }
});

it('a relay switched off (state disabled) or a source that does not say has no relay circuit check', async () => {
  const source = { lastCycleAt: null, state: 'running' };
  const details = await createHealth({ db: t.db, relay: source }).details();
  expect(details.checks.map((check) => check.name)).not.toContain(CHECK);
  const off = { lastCycleAt: null, state: 'disabled', circuitOutage: null };
  const offDetails = await createHealth({ db: t.db, relay: off }).details();
  expect(offDetails.checks.map((check) => check.name)).not.toContain(CHECK);
});
