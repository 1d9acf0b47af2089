import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  createEmitter,
  createRelay,
  emit,
  emitMany,
  fromPrisma,
  type Logger,
  type OutboxEvent,
  type OutboxObserver,
  type Relay,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent, statusOf, waitFor } from './helpers';

/**
 * The outbox observer is one function of `{ type, … }` events: these tests pin the exact
 * sequence each situation produces, against the real PostgreSQL.
 */
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

function recorder(): { events: OutboxEvent[]; observer: OutboxObserver } {
  const events: OutboxEvent[] = [];
  return { events, observer: (event) => void events.push(event) };
}

type CycleCount = 'claimed' | 'sent' | 'retried' | 'failed' | 'lost' | 'unavailable' | 'released';
const cycle = (counts: Partial<Record<CycleCount, number>>) => ({
  type: 'cycle',
  claimed: 0,
  sent: 0,
  retried: 0,
  failed: 0,
  lost: 0,
  unavailable: 0,
  released: 0,
  ...counts,
  durationMs: expect.any(Number),
});

describe('the outbox observer receives one { type } event at a time', () => {
  it('a sent row: inserted, claimed, sent (with its age), cycle; an empty cycle after it', async () => {
    const { events, observer } = recorder();
    const emitter = createEmitter({ observer, logger: silent });
    const { ids } = await emitter.emitMany(t.db, [{ type: 'order.created', payload: { n: 1 } }]);
    const relay = createRelay({ db: t.db, publisher: new InMemoryPublisher(), logger: silent, observer });
    await relay.runOnce();
    await relay.runOnce();
    expect(events).toEqual([
      { type: 'inserted', ids, types: ['order.created'], committed: true },
      { type: 'claimed', claimToken: expect.any(String), ids, types: ['order.created'] },
      { type: 'sent', id: ids[0], eventType: 'order.created', attempt: 1, ageMs: expect.any(Number) },
      cycle({ claimed: 1, sent: 1 }),
      cycle({}),
    ]);
    const sent = events[2] as Extract<OutboxEvent, { type: 'sent' }>;
    expect(sent.ageMs).toBeGreaterThanOrEqual(0);
    for (const e of events.filter((x) => x.type === 'cycle')) expect(e.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a retryable failure, then a permanent one: retry-scheduled at the stored due time, then failed', async () => {
    const { id } = await emit(t.db, { type: 'order.paid', payload: {}, maxRetries: 3 });
    let attempts = 0;
    const publisher = new InMemoryPublisher({
      decide: () =>
        (attempts += 1) === 1 ? { retryable: 'broker busy' } : { permanent: 'rejected by schema' },
    });
    const { events, observer } = recorder();
    const relay = createRelay({ db: t.db, publisher, logger: silent, observer });
    await relay.runOnce();
    const [due] = await t.db.query<{ next_attempt_at: Date }>(
      'SELECT next_attempt_at FROM outbox_events WHERE id = $1::uuid',
      [id],
    );
    await t.db.execute('UPDATE outbox_events SET next_attempt_at = now() WHERE id = $1::uuid', [id]);
    await relay.runOnce();
    expect(events).toEqual([
      { type: 'claimed', claimToken: expect.any(String), ids: [id], types: ['order.paid'] },
      {
        type: 'retry-scheduled',
        id,
        eventType: 'order.paid',
        attempt: 1,
        error: 'broker busy',
        nextAttemptAt: due!.next_attempt_at,
      },
      cycle({ claimed: 1, retried: 1 }),
      { type: 'claimed', claimToken: expect.any(String), ids: [id], types: ['order.paid'] },
      {
        type: 'failed',
        id,
        eventType: 'order.paid',
        attempt: 2,
        error: 'rejected by schema',
        reason: 'permanent',
      },
      cycle({ claimed: 1, failed: 1 }),
    ]);
    expect(await statusOf(t.db, id)).toMatchObject({ status: 'FAILED', retry_count: 2 });
  });

  it('a cycle accounts for every row it claimed: sent, retried, failed, unavailable (handed back), lost, released', async () => {
    const { ids } = await emitMany(t.db, [
      { type: 'ok', payload: {} },
      { type: 'busy', payload: {} },
      { type: 'bad', payload: {} },
      { type: 'down', payload: {} },
    ]);
    const publisher = new InMemoryPublisher({
      decide: (m) =>
        m.type === 'ok'
          ? 'sent'
          : m.type === 'busy'
            ? { retryable: 'broker busy' }
            : m.type === 'bad'
              ? { permanent: 'rejected' }
              : { unavailable: 'partition offline' },
    });
    const { events, observer } = recorder();
    const relay = createRelay({ db: t.db, publisher, logger: silent, observer });
    await relay.runOnce();
    const cycles = events.filter((e) => e.type === 'cycle');
    expect(cycles).toEqual([cycle({ claimed: 4, sent: 1, retried: 1, failed: 1, unavailable: 1 })]);
    expect(await statusOf(t.db, ids[3]!)).toMatchObject({ status: 'PENDING', retry_count: 0 });
  });

  it('a broker outage: circuit-opened, empty cycles while open, circuit-closed on the probe that is sent', async () => {
    const { id } = await emit(t.db, { type: 'o', payload: {} });
    const ids = [id];
    let brokerUp = false;
    let now = 1_000_000;
    const publisher = new InMemoryPublisher({
      decide: () => (brokerUp ? 'sent' : { unavailable: 'connect ECONNREFUSED 127.0.0.1:9092' }),
    });
    const { events, observer } = recorder();
    const relay = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      observer,
      options: { circuit: { failureThreshold: 1, openMs: 50, maxOpenMs: 50, probeBatchSize: 1 } },
      clock: () => now,
    });
    await relay.runOnce();
    await relay.runOnce();
    brokerUp = true;
    now += 50;
    await relay.runOnce();
    expect(events).toEqual([
      { type: 'claimed', claimToken: expect.any(String), ids, types: ['o'] },
      {
        type: 'circuit-opened',
        failures: 1,
        openMs: 50,
        error: 'connect ECONNREFUSED 127.0.0.1:9092',
        reopened: false,
      },
      cycle({ claimed: 1, unavailable: 1 }),
      cycle({}),
      { type: 'claimed', claimToken: expect.any(String), ids, types: ['o'] },
      { type: 'circuit-closed', openedForMs: 50, relayClosed: false },
      { type: 'sent', id: ids[0], eventType: 'o', attempt: 1, ageMs: expect.any(Number) },
      cycle({ claimed: 1, sent: 1 }),
    ]);
  });

  it('a database call of the running relay killed: infrastructure-error, then the loop goes on', async () => {
    const client = t.newClient({ max: 2 });
    const { events, observer } = recorder();
    const relay: Relay = createRelay({
      db: fromPrisma(client),
      publisher: new InMemoryPublisher(),
      logger: silent,
      observer,
      options: { pollInterval: 20, errorBackoff: 1 },
    });
    const locker = listened(new Client({ connectionString: t.url }));
    await locker.connect();
    try {
      relay.start();
      await waitFor(() => events.some((e) => e.type === 'cycle'));
      // The relay's next statement waits behind this lock; then its backend is terminated.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE');
      const from = events.length;
      let killed = 0;
      await waitFor(async () => {
        const { rows } = await locker.query<{ killed: boolean }>(
          `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        killed = rows.filter((r) => r.killed).length;
        return killed > 0;
      });
      await waitFor(() => events.slice(from).some((e) => e.type === 'infrastructure-error'));
      await locker.query('ROLLBACK');
      const { id } = await emit(t.db, { type: 'after.outage', payload: {} });
      await waitFor(() => events.some((e) => e.type === 'sent' && e.id === id));
      await relay.close();
      const seen = events.slice(from).filter((e) => !(e.type === 'cycle' && e.claimed === 0));
      expect(killed).toBe(1);
      expect(seen).toEqual([
        {
          type: 'infrastructure-error',
          operation: expect.stringMatching(/^(claim|recover leases)$/),
          error: expect.stringMatching(/^FerryError \[FERRY_DATABASE_UNAVAILABLE\]: outbox .* failed: /),
        },
        { type: 'claimed', claimToken: expect.any(String), ids: [id], types: ['after.outage'] },
        { type: 'sent', id, eventType: 'after.outage', attempt: 1, ageMs: expect.any(Number) },
        cycle({ claimed: 1, sent: 1 }),
      ]);
      expect(await statusOf(t.db, id)).toMatchObject({ status: 'SENT' });
    } finally {
      await relay.close();
      await locker.end();
    }
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('observer bug');
      },
    ],
    ['rejects', () => Promise.reject(new Error('async observer bug'))],
  ])('an observer that %s on every event changes no row and stops nothing', async (_how, observer) => {
    const warnings: string[] = [];
    const logger: Logger = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (fields: object | string, message?: string) =>
        void warnings.push(typeof fields === 'string' ? fields : (message ?? '')),
    };
    const emitter = createEmitter({ observer, logger });
    const { ids } = await emitter.emitMany(t.db, [
      { type: 'ok', payload: {} },
      { type: 'bad', payload: {}, maxRetries: 1 },
    ]);
    const publisher = new InMemoryPublisher({
      decide: (m) => (m.type === 'ok' ? 'sent' : { retryable: 'no route' }),
    });
    const relay = createRelay({ db: t.db, publisher, logger, observer });
    expect(await relay.runOnce()).toMatchObject({ claimed: 2, sent: 1, failed: 1 });
    expect(await statusOf(t.db, ids[0]!)).toMatchObject({ status: 'SENT' });
    expect(await statusOf(t.db, ids[1]!)).toMatchObject({ status: 'FAILED', last_error: 'no route' });
    // Every event reached the observer and its failure was logged: inserted, claimed, sent, failed, cycle.
    const swallowed = () => warnings.filter((w) => w.startsWith('ferry observer threw')).length;
    await waitFor(() => swallowed() >= 5);
    expect(swallowed()).toBe(5);
  });

  it('an observer that changes the inserted event changes nothing emitMany returns: ids stay in input order', async () => {
    const emitter = createEmitter({
      logger: silent,
      observer: (event) => {
        if (event.type === 'inserted') (event.ids as string[]).reverse();
      },
    });
    const { ids } = await emitter.emitMany(t.db, [
      { type: 'first', payload: {} },
      { type: 'second', payload: {} },
    ]);
    const rows = await t.db.query<{ event_type: string }>(
      'SELECT event_type FROM outbox_events, unnest($1::uuid[]) WITH ORDINALITY AS i(id, n) WHERE outbox_events.id = i.id ORDER BY i.n',
      [ids],
    );
    expect(rows.map((row) => row.event_type)).toEqual(['first', 'second']);
  });
});
