/**
 * Review 150: a relay that stopped on its own (the pool it runs on was ended, state 'stopped')
 * while its circuit was open claims nothing any more, as a closed one: its circuit ends with it,
 * as it does at close(). On main it stayed open for ever: details' `relay circuit` check said
 * "half-open … probing the broker since …" of a relay that never probes again, and the
 * circuit-open gauge (no circuit-closed event) counted it for the life of the process.
 */
import { createHealth, createRelay, emit, fromPg, type OutboxEvent } from '@ferry/core';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent } from '../outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it("a relay stopped on an ended pool with its circuit open: the circuit ends, details' check is up", async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const events: OutboxEvent[] = [];
  const relay = createRelay({
    db: fromPg(pool),
    publisher: new InMemoryPublisher({ decide: () => ({ unavailable: 'broker down' }) }),
    logger: silent,
    observer: (event) => void events.push(event),
    options: { pollInterval: 20, circuit: { openMs: 100, maxOpenMs: 100 } },
  });
  await emit(t.db, { type: 'health.stopped', payload: {} });
  relay.start();
  try {
    await waitUntil('the circuit open', () => relay.circuit === 'open', { timeoutMs: 10_000 });
    await pool.end();
    await waitUntil('the relay stopped', () => relay.state === 'stopped', { timeoutMs: 10_000 });
    // Its loop has ended (nothing in flight): nothing probes the broker any more.
    await waitUntil('the circuit ended', () => relay.circuitOutage === null, { timeoutMs: 5_000 });
    const details = await createHealth({ db: t.db, relay }).details();
    expect(details.checks.find((check) => check.name === 'relay circuit')).toEqual({
      name: 'relay circuit',
      status: 'up',
      detail: 'closed',
    });
    const opened = events.filter((event) => event.type === 'circuit-opened' && !event.reopened);
    const closed = events.filter((event) => event.type === 'circuit-closed');
    expect(closed).toHaveLength(opened.length);
  } finally {
    await relay.close();
  }
}, 30_000);
