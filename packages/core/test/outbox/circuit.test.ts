import { createRelay, emitMany, type OutboxObserver } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { CircuitBreaker } from '../../src/outbox/circuit';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { writtenLog } from '../../../../test-support/writtenLog';
import { silent, statusOf, waitFor } from './helpers';

describe('CircuitBreaker (pure, injected clock)', () => {
  const options = { failureThreshold: 2, openMs: 100, maxOpenMs: 300, probeBatchSize: 3 };
  const down = { kind: 'unavailable' as const, error: 'ECONNREFUSED' };

  it('opens after failureThreshold all-unavailable cycles, probes half-open, closes on an answer', () => {
    let now = 1_000;
    const breaker = new CircuitBreaker(options, () => now);
    expect(breaker.record(down)).toBeUndefined();
    expect(breaker.claimLimit(50)).toBe(50);
    expect(breaker.record(down)).toEqual({
      type: 'opened',
      failures: 2,
      openMs: 100,
      error: 'ECONNREFUSED',
      reopened: false,
      publisherClosed: false,
    });
    expect(breaker.state).toBe('open');
    expect(breaker.claimLimit(50)).toBe(0);
    expect(breaker.remainingOpenMs()).toBe(100);
    now += 100;
    expect(breaker.state).toBe('half-open');
    expect(breaker.claimLimit(50)).toBe(3);
    expect(breaker.record({ kind: 'reachable' })).toEqual({
      type: 'closed',
      openedForMs: 100,
      relayClosed: false,
    });
    expect(breaker.state).toBe('closed');
  });

  it('reopens for a doubled period, capped at maxOpenMs, while probes fail', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ ...options, failureThreshold: 1 }, () => now);
    const periods: number[] = [];
    const reopened: boolean[] = [];
    for (let i = 0; i < 4; i += 1) {
      const change = breaker.record(down);
      if (change?.type === 'opened') {
        periods.push(change.openMs);
        reopened.push(change.reopened);
      }
      now += breaker.remainingOpenMs();
    }
    expect(periods).toEqual([100, 200, 300, 300]);
    // Only the first opening follows a closed circuit; the rest are failed probes.
    expect(reopened).toEqual([false, true, true, true]);
  });

  it('ignores an all-unavailable cycle claimed before the latest transition, not an answer', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ ...options, failureThreshold: 1 }, () => now);
    const before = breaker.epoch;
    expect(breaker.record(down, before)).toMatchObject({ type: 'opened', openMs: 100 });
    now += 100;
    // Half-open: a second cycle claimed before the opening is no failed probe.
    expect(breaker.record(down, before)).toBeUndefined();
    expect(breaker.state).toBe('half-open');
    expect(breaker.record({ kind: 'reachable' }, before)).toEqual({
      type: 'closed',
      openedForMs: 100,
      relayClosed: false,
    });
    // Closed again: an outage report claimed before it closed is no new failure.
    expect(breaker.record(down, before)).toBeUndefined();
    expect(breaker.state).toBe('closed');
    expect(breaker.record(down, breaker.epoch)).toMatchObject({ type: 'opened' });
  });

  it('outage: since the first opening, the latest error, openings and the next probe; null once closed', () => {
    let now = 1_000;
    const breaker = new CircuitBreaker({ ...options, failureThreshold: 1 }, () => now);
    expect(breaker.outage).toBeNull();
    breaker.record(down);
    expect(breaker.outage).toEqual({
      state: 'open',
      since: new Date(1_000),
      error: 'ECONNREFUSED',
      publisherClosed: false,
      openings: 1,
      nextProbeAt: new Date(1_100),
    });
    now = 1_100;
    expect(breaker.outage).toMatchObject({ state: 'half-open', nextProbeAt: new Date(1_100) });
    // A failed probe opens it again: the outage goes on from its start, with the probe's error.
    breaker.record({ kind: 'unavailable', error: 'publisher is closed', publisherClosed: true });
    expect(breaker.outage).toEqual({
      state: 'open',
      since: new Date(1_000),
      error: 'publisher is closed',
      publisherClosed: true,
      openings: 2,
      nextProbeAt: new Date(1_300),
    });
    now = 1_300;
    breaker.record({ kind: 'reachable' });
    expect(breaker.outage).toBeNull();
    breaker.record(down);
    expect(breaker.outage).toMatchObject({ since: new Date(1_300), openings: 1, publisherClosed: false });
    expect(breaker.end()).toMatchObject({ type: 'closed', relayClosed: true });
    expect(breaker.outage).toBeNull();
  });

  it('a reachable cycle resets the failure count while closed', () => {
    const breaker = new CircuitBreaker(options, () => 0);
    breaker.record(down);
    breaker.record({ kind: 'reachable' });
    expect(breaker.record(down)).toBeUndefined();
    expect(breaker.state).toBe('closed');
  });
});

describe('relay with an unavailable broker', () => {
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

  it('spends no attempt, opens the circuit, probes, and closes once the broker answers', async () => {
    const { ids } = await emitMany(
      t.db,
      [0, 1, 2, 3].map((n) => ({ type: 'o', payload: { n }, maxRetries: 1 })),
    );
    let brokerUp = false;
    let now = 1_000_000;
    const publisher = new InMemoryPublisher({
      decide: () => (brokerUp ? 'sent' : { unavailable: 'connect ECONNREFUSED 127.0.0.1:9092' }),
    });
    const events: string[] = [];
    const observer: OutboxObserver = (e) => {
      if (e.type === 'circuit-opened') events.push(`opened ${e.failures} ${e.openMs} ${e.error}`);
      if (e.type === 'circuit-closed') events.push('closed');
    };
    const relay = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      observer,
      options: { circuit: { openMs: 50, maxOpenMs: 50, probeBatchSize: 1 } },
      // A manual clock: on a loaded machine 50 ms of wall time can pass inside one runOnce.
      clock: () => now,
    });
    const first = await relay.runOnce();
    expect(first).toMatchObject({ claimed: 4, unavailable: 4, retried: 0, failed: 0 });
    for (const id of ids)
      expect(await statusOf(t.db, id)).toMatchObject({ status: 'PENDING', retry_count: 0, claim_count: 0 });
    expect(relay.circuit).toBe('open');
    expect(events).toEqual(['opened 1 50 connect ECONNREFUSED 127.0.0.1:9092']);
    expect((await relay.runOnce()).claimed).toBe(0);

    now += 50;
    expect(relay.circuit).toBe('half-open');
    expect((await relay.runOnce()).claimed).toBe(1);
    expect(relay.circuit).toBe('open');
    expect(events).toHaveLength(2);

    brokerUp = true;
    now += 50;
    expect(relay.circuit).toBe('half-open');
    expect(await relay.runOnce()).toMatchObject({ claimed: 1, sent: 1 });
    expect(relay.circuit).toBe('closed');
    expect(events[2]).toBe('closed');
    expect(await relay.runOnce()).toMatchObject({ claimed: 3, sent: 3 });
  });

  // Observed on main: 'broker unavailable: circuit opened, claiming paused' for a relay on a
  // closed publisher, the broker fine (review 148).
  it('a relay on a closed publisher says so: its circuit opens "publisher closed", with the publisher\'s closed answer as the error; a cycle of other unavailable outcomes too says "broker unavailable"', async () => {
    const { ids } = await emitMany(
      t.db,
      [0, 1].map((n) => ({ type: 'o', payload: { n } })),
    );
    const lines = (log: ReturnType<typeof writtenLog>) =>
      log
        .text()
        .split('\n')
        .filter((line) => line.includes('circuit opened'))
        .map((line) => JSON.parse(line) as { msg: string; error: string });
    const run = async (publisher: InMemoryPublisher) => {
      const log = writtenLog();
      const opened: string[] = [];
      let now = 1_000_000;
      const relay = createRelay({
        db: t.db,
        publisher,
        logger: log.logger,
        observer: (e) => {
          if (e.type === 'circuit-opened') opened.push(e.error);
        },
        options: { circuit: { openMs: 50, maxOpenMs: 50, probeBatchSize: 1 } },
        clock: () => now,
      });
      expect(await relay.runOnce()).toMatchObject({ claimed: 2, unavailable: 2 });
      now += 50;
      expect(await relay.runOnce()).toMatchObject({ claimed: 1, unavailable: 1 });
      await relay.close();
      return { opened, lines: lines(log).map(({ msg, error }) => [msg, error]) };
    };
    const closed = new InMemoryPublisher();
    await closed.close();
    expect(await run(closed)).toEqual({
      opened: ['publisher is closed', 'publisher is closed'],
      lines: [
        ['publisher closed: circuit opened, claiming paused', 'publisher is closed'],
        ['publisher closed: circuit opened, claiming paused', 'publisher is closed'],
      ],
    });
    // One outcome of the cycle not the closed answer: the broker is out of reach as far as the relay knows.
    const mixed = new InMemoryPublisher({
      decide: (m) =>
        m.id === ids[0] ? { unavailable: 'publisher is closed' } : { unavailable: 'ECONNREFUSED' },
    });
    expect((await run(mixed)).lines[0]).toEqual([
      'broker unavailable: circuit opened, claiming paused',
      expect.any(String),
    ]);
  });

  it('mixed outcomes: unavailable rows are released, the others complete, the circuit stays closed', async () => {
    const { ids } = await emitMany(
      t.db,
      [0, 1, 2].map((n) => ({ type: 'o', payload: { n } })),
    );
    const decisions = [{ unavailable: 'broker not available' }, 'sent', { retryable: 'nack' }] as const;
    const publisher = new InMemoryPublisher({ decide: (m) => decisions[m.payload.n as number]! });
    const relay = createRelay({ db: t.db, publisher, logger: silent });
    expect(await relay.runOnce()).toMatchObject({ claimed: 3, unavailable: 1, sent: 1, retried: 1 });
    expect(await statusOf(t.db, ids[0]!)).toMatchObject({ status: 'PENDING', retry_count: 0 });
    expect(await statusOf(t.db, ids[1]!)).toMatchObject({ status: 'SENT' });
    expect(await statusOf(t.db, ids[2]!)).toMatchObject({ status: 'PENDING', retry_count: 1 });
    expect(relay.circuit).toBe('closed');
  });

  it('an outage longer than maxRetries x initialDelay fails no event; all are SENT after it', async () => {
    const { ids } = await emitMany(
      t.db,
      Array.from({ length: 20 }, (_, n) => ({
        type: 'o',
        payload: { n },
        orderingKey: `k${n % 3}`,
        maxRetries: 2,
      })),
    );
    let probes = 0;
    const publisher = new InMemoryPublisher({
      decide: () => (probes++ < 60 ? { unavailable: 'ECONNREFUSED' } : 'sent'),
    });
    const relay = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: {
        pollInterval: 10,
        retry: { initialDelay: 10 },
        circuit: { openMs: 5, maxOpenMs: 20 },
      },
    });
    relay.start();
    try {
      await waitFor(async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
        );
        return row?.n === ids.length;
      }, 30_000);
    } finally {
      await relay.close();
    }
    expect(probes).toBeGreaterThan(60);
    const [failed] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'FAILED' OR retry_count > 0`,
    );
    expect(failed?.n).toBe(0);
  });
});

describe('CircuitBreaker.end (the relay closed)', () => {
  it('ends an open circuit once, and a cycle claimed before the end reopens nothing', () => {
    let now = 0;
    const breaker = new CircuitBreaker(
      { failureThreshold: 1, openMs: 100, maxOpenMs: 100, probeBatchSize: 1 },
      () => now,
    );
    expect(breaker.end()).toBeUndefined();
    const before = breaker.epoch;
    breaker.record({ kind: 'unavailable', error: 'down' });
    const claimedWhileOpen = breaker.epoch;
    now += 30;
    expect(breaker.end()).toEqual({ type: 'closed', openedForMs: 30, relayClosed: true });
    expect(breaker.state).toBe('closed');
    expect(breaker.end()).toBeUndefined();
    // An abandoned cycle that settles after close() says nothing new.
    expect(breaker.record({ kind: 'unavailable', error: 'down' }, claimedWhileOpen)).toBeUndefined();
    expect(breaker.record({ kind: 'unavailable', error: 'down' }, before)).toBeUndefined();
    expect(breaker.state).toBe('closed');
  });
});
