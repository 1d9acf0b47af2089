/**
 * An application that ends the pg Pool its running outbox relay uses (a shutdown in the wrong
 * order, or the pool ended by other code) leaves a relay that can never claim again: an ended pool
 * never opens a session. As the inbox worker does (review 87), the relay stops polling on it, says
 * so (state 'stopped', stopReason, liveness), does not report a FERRY_CLOSED cycle error every
 * back-off for ever, close() works at once and start() starts it again. A database that is
 * unavailable is still claimed through.
 */
import { createHealth, createRelay, emit, fromPg, type OutboxEvent, type SqlExecutor } from '@ferry/core';
import { InMemoryPublisher, waitUntil } from '@ferry/testing';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { failingStatements, silent } from './helpers';

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

/** `db`, counting the statements sent through it. */
function counted(db: SqlExecutor): { db: SqlExecutor; statements: () => number } {
  let n = 0;
  return {
    statements: () => n,
    db: {
      inTransaction: db.inTransaction,
      query: (text, values, options) => ((n += 1), db.query(text, values, options)),
      execute: (text, values, options) => ((n += 1), db.execute(text, values, options)),
      transaction: (work, options) => ((n += 1), db.transaction(work, options)),
    },
  };
}

const cycleErrors = (events: readonly OutboxEvent[]) =>
  events.filter((event) => event.type === 'infrastructure-error');

it('stops polling an ended pool once, says so, closes at once, and starts again', async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const events: OutboxEvent[] = [];
  const publisher = new InMemoryPublisher();
  const { db, statements } = counted(fromPg(pool));
  const relay = createRelay({
    db,
    publisher,
    logger: silent,
    observer: (event) => void events.push(event),
    // The smallest back-off: a relay that kept claiming would report many failures below.
    options: { pollInterval: 20, errorBackoff: 1 },
  });
  relay.start();
  const { id } = await emit(t.db, { type: 'test.event', payload: { n: 1 } });
  await waitUntil('the event published', () => publisher.delivered.some((m) => m.id === id), {
    timeoutMs: 10_000,
  });
  await waitUntil('the relay idle', () => relay.idle, { timeoutMs: 10_000 });
  await pool.end();

  await waitUntil('the relay stopped', () => relay.state === 'stopped', { timeoutMs: 10_000 });
  expect(relay.stopReason).toMatch(/^its database client was ended \(FERRY_CLOSED\)/);
  expect(cycleErrors(events)).toHaveLength(1);
  expect(cycleErrors(events)[0]).toMatchObject({ error: expect.stringContaining('FERRY_CLOSED') });
  // Long enough for ten back-offs from 1 ms: the loop sent nothing more, reported nothing more.
  const sent = statements();
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  expect(statements()).toBe(sent);
  expect(cycleErrors(events)).toHaveLength(1);

  const live = await createHealth({ db: t.db, relay }).liveness();
  expect(live.status).toBe('down');
  expect(live.checks).toContainEqual(
    expect.objectContaining({
      name: 'relay',
      status: 'down',
      detail: `state stopped: ${relay.stopReason}`,
    }),
  );

  // start() starts the loop again: on the same ended pool it stops again at once.
  relay.start();
  expect(relay.state).toBe('running');
  expect(relay.stopReason).toBeNull();
  await waitUntil('the relay stopped again', () => relay.state === 'stopped', {
    timeoutMs: 10_000,
  });
  expect(cycleErrors(events)).toHaveLength(2);

  await relay.close();
  expect(relay.state).toBe('closed');
  expect(relay.stopReason).toBeNull();
  await expect(relay.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
  expect(() => relay.start()).toThrow(expect.objectContaining({ code: 'FERRY_CLOSED' }));
}, 30_000);

it('claims on through a database that is unavailable: only an ended client stops the relay', async () => {
  let claims = 0;
  const relay = createRelay({
    db: failingStatements(t.db, 'outbox_events', () => void (claims += 1)),
    publisher: new InMemoryPublisher(),
    logger: silent,
    options: { pollInterval: 20, errorBackoff: 1 },
  });
  relay.start();
  await waitUntil('three failed cycles', () => claims >= 3, { timeoutMs: 10_000 });
  expect(relay.state).toBe('running');
  expect(relay.stopReason).toBeNull();
  await relay.close();
  expect(relay.state).toBe('closed');
});
