/**
 * The pipelined relay (pipelineDepth > 1) against a hostile publisher and store: per-key order
 * across batches in flight (retries, unavailable, throws, lost leases, failed completions),
 * close() with batches in flight, and no `sent` reported for a row the database did not mark.
 * Real PostgreSQL; the publisher checks the order invariant against the table at publish time.
 */
import {
  createRelay,
  emitMany,
  type OutboxEvent,
  type OutboxMessage,
  type OutboxOptions,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent, waitFor } from './helpers';

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

const KEYS = ['a', 'b', 'c', 'd', 'e'];

async function emitKeyed(n: number): Promise<string[]> {
  const events = Array.from({ length: n }, (_, i) => ({
    type: 'hostile',
    payload: { i },
    orderingKey: KEYS[i % KEYS.length],
  }));
  return (await emitMany(t.db, events)).ids;
}

async function countWhere(status: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status = $1`,
    [status],
  );
  return row?.n ?? 0;
}

type Decision = 'sent' | 'retryable' | 'permanent' | 'unavailable' | 'throw' | 'hang';

/**
 * A publisher that, before deciding, checks that every earlier event of each message's key is
 * SENT (the order invariant under failedHead 'block'); violations are collected. `decide` sees
 * the message and the number of the publish call.
 */
class CheckingPublisher implements Publisher {
  readonly violations: string[] = [];
  readonly delivered: string[] = [];
  calls = 0;
  private inFlight = 0;
  /** Publish calls in flight at once, at most. */
  maxInFlight = 0;
  readonly callsAfter: { closedAt: number | null } = { closedAt: null };
  publishedAfterClose = 0;

  constructor(
    private readonly decide: (m: OutboxMessage, call: number) => Decision,
    /** The first publish waits (with a deadline) until a second one is in flight. */
    private readonly awaitSecond = false,
    /** What an earlier event of the key may be in (failedHead 'skip': FAILED too). */
    private readonly confirmed: readonly string[] = ['SENT'],
  ) {}

  async publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    const call = (this.calls += 1);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await this.publishChecked(messages, signal, call);
    } finally {
      this.inFlight -= 1;
    }
  }

  private async publishChecked(
    messages: readonly OutboxMessage[],
    signal: AbortSignal,
    call: number,
  ): Promise<readonly PublishOutcome[]> {
    if (this.awaitSecond && call === 1) await waitFor(() => this.calls >= 2);
    if (this.callsAfter.closedAt !== null) this.publishedAfterClose += 1;
    const earlier = await t.db.query<{ id: string; n: number }>(
      `SELECT m.id::text AS id, count(p.id)::int AS n
       FROM outbox_events m JOIN outbox_events p
         ON p.ordering_key = m.ordering_key AND p.seq < m.seq AND p.status <> ALL($2::text[])
       WHERE m.id = ANY($1::uuid[]) GROUP BY m.id`,
      [messages.map((m) => m.id), this.confirmed],
    );
    for (const row of earlier) if (row.n > 0) this.violations.push(`${row.id}: ${row.n} earlier not SENT`);
    const outcomes: PublishOutcome[] = [];
    for (const m of messages) {
      const d = this.decide(m, call);
      if (d === 'throw') throw new Error('publisher exploded');
      if (d === 'hang') {
        // Ignores the abort, as a misbehaving client may.
        await new Promise((resolve) => setTimeout(resolve, 60_000).unref());
        continue;
      }
      if (signal.aborted) break;
      if (d === 'sent') {
        this.delivered.push(m.id);
        outcomes.push({ id: m.id, status: 'sent' });
      } else outcomes.push({ id: m.id, status: d, error: d });
    }
    return outcomes;
  }
}

function relayWith(
  publisher: Publisher,
  options: OutboxOptions,
  extra: { store?: ReturnType<typeof relayStore>; events?: OutboxEvent[] } = {},
) {
  return createRelay({
    db: t.db,
    publisher,
    logger: silent,
    store: extra.store,
    observer: (e) => void extra.events?.push(e),
    options: {
      pipelineDepth: 4,
      batchSize: 3,
      pollInterval: 20,
      errorBackoff: 10,
      retry: { initialDelay: 0, maxDelay: 0 },
      circuit: { failureThreshold: 1_000 },
      ...options,
    },
  });
}

/** Every `sent` event names a row that is SENT, once. */
async function expectSentReportsTrue(events: OutboxEvent[]): Promise<void> {
  const sent = events.flatMap((e) => (e.type === 'sent' ? [e.id] : []));
  expect(new Set(sent).size).toBe(sent.length);
  const rows = await t.db.query<{ id: string; status: string }>(
    `SELECT id::text AS id, status FROM outbox_events WHERE id = ANY($1::uuid[])`,
    [sent],
  );
  expect(rows.filter((r) => r.status !== 'SENT')).toEqual([]);
}

describe('pipelined relay under a hostile publisher', () => {
  it.each(['keep', 'delete'] as const)(
    'keeps each key in order across batches in flight while outcomes are retryable, unavailable or thrown (onSent %s)',
    async (onSent) => {
      const ids = await emitKeyed(60);
      const seenAttempts = new Map<string, number>();
      const publisher = new CheckingPublisher((m, call) => {
        const n = (seenAttempts.get(m.id) ?? 0) + 1;
        seenAttempts.set(m.id, n);
        const i = ids.indexOf(m.id);
        if (n === 1 && i % 7 === 3 && call % 5 === 0) return 'throw';
        if (n === 1 && i % 3 === 0) return 'retryable';
        if (n <= 2 && i % 4 === 1) return 'unavailable';
        return 'sent';
      }, true);
      const events: OutboxEvent[] = [];
      const r = relayWith(publisher, { onSent }, { events });
      r.start();
      try {
        await waitFor(async () => {
          const [row] = await t.db.query<{ sent: number; rest: number }>(
            `SELECT count(*) FILTER (WHERE status = 'SENT')::int AS sent,
             count(*) FILTER (WHERE status <> 'SENT')::int AS rest FROM outbox_events`,
          );
          return row?.rest === 0 && row.sent === (onSent === 'keep' ? 60 : 0);
        }, 30_000);
      } finally {
        await r.close();
      }
      expect(publisher.violations).toEqual([]);
      expect(publisher.maxInFlight).toBeGreaterThan(1);
      expect(events.some((e) => e.type === 'retry-scheduled')).toBe(true);
      expect(new Set(publisher.delivered).size).toBe(60);
      await expectSentReportsTrue(events);
    },
  );

  it('keeps each key in order with three pipelined relays on one table', async () => {
    const ids = await emitKeyed(90);
    const seenAttempts = new Map<string, number>();
    const publisher = new CheckingPublisher((m) => {
      const n = (seenAttempts.get(m.id) ?? 0) + 1;
      seenAttempts.set(m.id, n);
      const i = ids.indexOf(m.id);
      if (n === 1 && i % 3 === 0) return 'retryable';
      if (n === 1 && i % 4 === 1) return 'unavailable';
      return 'sent';
    }, true);
    const relays = [0, 1, 2].map(() => relayWith(publisher, { batchSize: 2 }));
    for (const r of relays) r.start();
    try {
      await waitFor(async () => (await countWhere('SENT')) === 90, 30_000);
    } finally {
      await Promise.all(relays.map((r) => r.close()));
    }
    expect(publisher.violations).toEqual([]);
    expect(publisher.maxInFlight).toBeGreaterThan(1);
  });

  it.each(['block', 'skip'] as const)(
    'publishes past a FAILED head only under failedHead skip, never while it is in flight (%s)',
    async (failedHead) => {
      const ids = await emitKeyed(40);
      const permanent = new Set(ids.filter((_, i) => i % 9 === 2));
      const publisher = new CheckingPublisher(
        (m) => (permanent.has(m.id) ? 'permanent' : 'sent'),
        true,
        failedHead === 'skip' ? ['SENT', 'FAILED'] : ['SENT'],
      );
      const r = relayWith(publisher, { ordering: { failedHead } });
      r.start();
      // Under 'block' each key behind a FAILED event stays PENDING for good.
      const blocked = failedHead === 'block' ? 'PENDING' : 'none';
      const [expected] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM outbox_events e WHERE EXISTS (
           SELECT 1 FROM outbox_events f WHERE f.ordering_key = e.ordering_key AND f.seq < e.seq
             AND f.id = ANY($1::uuid[]))`,
        [[...permanent]],
      );
      const stuck = failedHead === 'block' ? expected!.n : 0;
      try {
        await waitFor(async () => {
          const [row] = await t.db.query<{ failed: number; pending: number; processing: number }>(
            `SELECT count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
               count(*) FILTER (WHERE status = $1)::int AS pending,
               count(*) FILTER (WHERE status = 'PROCESSING')::int AS processing FROM outbox_events`,
            [blocked],
          );
          const failed = failedHead === 'block' ? row!.failed >= 1 : row!.failed === permanent.size;
          return failed && row!.pending === stuck && row!.processing === 0 && r.idle;
        }, 30_000);
      } finally {
        await r.close();
      }
      expect(publisher.violations).toEqual([]);
      expect(publisher.maxInFlight).toBeGreaterThan(1);
    },
  );

  it('loses nothing and reports no false sent when a completion fails after the publish, batches in flight', async () => {
    await emitKeyed(30);
    const store = relayStore(t.db);
    let completions = 0;
    const failing = {
      ...store,
      complete: async (...args: Parameters<typeof store.complete>) => {
        completions += 1;
        // A session the server ended (transient); exactly 'Connection terminated' would be a client
        // the application ended, which stops the relay (EndedClientStop).
        if (completions === 2 || completions === 3) throw new Error('Connection terminated unexpectedly');
        return store.complete(...args);
      },
    };
    const publisher = new CheckingPublisher(() => 'sent');
    const events: OutboxEvent[] = [];
    const r = relayWith(
      publisher,
      { lease: { duration: 600, heartbeatInterval: 100 } },
      { store: failing, events },
    );
    r.start();
    try {
      await waitFor(async () => (await countWhere('SENT')) === 30, 30_000);
    } finally {
      await r.close();
    }
    expect(publisher.violations).toEqual([]);
    await expectSentReportsTrue(events);
    // The rows of the failed completions were published again (at least once).
    expect(publisher.delivered.length).toBeGreaterThan(30);
  });

  it('never marks SENT under a claim whose renewals hang, and republishes it in key order', async () => {
    const ids = await emitKeyed(20);
    const store = relayStore(t.db);
    let hungToken: string | null = null;
    const hanging = {
      ...store,
      renew: (...args: Parameters<typeof store.renew>) => {
        const [token] = args;
        if (hungToken === null) hungToken = token;
        if (token === hungToken) return new Promise<number>(() => undefined);
        return store.renew(...args);
      },
    };
    let slowDone = false;
    const publisher: Publisher & { violations: string[] } = new CheckingPublisher(() => 'sent');
    const slow: Publisher = {
      publish: async (messages, signal) => {
        if (!slowDone) {
          slowDone = true;
          // The first batch outlives its lease: its renewals hang, it is counted lost.
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
        }
        return publisher.publish(messages, signal);
      },
    };
    const events: OutboxEvent[] = [];
    const r = relayWith(
      slow,
      { lease: { duration: 600, heartbeatInterval: 100 } },
      { store: hanging, events },
    );
    r.start();
    try {
      await waitFor(async () => (await countWhere('SENT')) === 20, 30_000);
    } finally {
      await r.close();
    }
    expect(publisher.violations).toEqual([]);
    expect(events.filter((e) => e.type === 'lease-lost').length).toBeGreaterThan(0);
    await expectSentReportsTrue(events);
    expect(ids).toHaveLength(20);
  });

  it('close() with a publish that ignores the abort and others in flight: resolves, publishes nothing after, leaves nothing to itself', async () => {
    await emitKeyed(30);
    let first = true;
    const publisher = new CheckingPublisher(() => {
      if (first) {
        first = false;
        return 'hang';
      }
      return 'sent';
    });
    const r = relayWith(publisher, {
      shutdownTimeout: 100,
      lease: { duration: 600, heartbeatInterval: 100 },
    });
    r.start();
    await waitFor(async () => (await countWhere('SENT')) >= 2);
    await r.close();
    publisher.callsAfter.closedAt = Date.now();
    const calls = publisher.calls;
    expect(r.state).toBe('closed');
    await expect(r.runOnce()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
    // What is still PROCESSING is only the hung batch; its lease expires and another relay sends it.
    const [held] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'PROCESSING' AND lease_expires_at > now() + interval '1 minute'`,
    );
    expect(held?.n).toBe(0);
    const next = relayWith(new CheckingPublisher(() => 'sent'), {});
    next.start();
    try {
      await waitFor(async () => (await countWhere('SENT')) === 30, 30_000);
    } finally {
      await next.close();
    }
    expect(publisher.calls).toBe(calls);
    expect(publisher.publishedAfterClose).toBe(0);
    expect(publisher.violations).toEqual([]);
  });
});

describe('pipelined relay and the circuit breaker', () => {
  it('does not count a batch claimed before the circuit opened as a failed half-open probe', async () => {
    await emitMany(
      t.db,
      Array.from({ length: 20 }, (_, i) => ({ type: 'down', payload: { i } })),
    );
    let now = 1_000_000;
    const gates: (() => void)[] = [];
    const sizes: number[] = [];
    let brokerUp = false;
    const publisher: Publisher = {
      async publish(messages) {
        sizes.push(messages.length);
        if (sizes.length <= 3) await new Promise<void>((resolve) => gates.push(resolve));
        return messages.map((m) =>
          brokerUp
            ? { id: m.id, status: 'sent' as const }
            : { id: m.id, status: 'unavailable' as const, error: 'ECONNREFUSED' },
        );
      },
    };
    const events: OutboxEvent[] = [];
    const r = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      clock: () => now,
      observer: (e) => void events.push(e),
      options: {
        batchSize: 5,
        pipelineDepth: 2,
        pollInterval: 20,
        circuit: { failureThreshold: 1, openMs: 100, maxOpenMs: 10_000, probeBatchSize: 1 },
      },
    });
    r.start();
    try {
      await waitFor(() => gates.length === 2);
      gates[0]!();
      await waitFor(() => r.circuit === 'open');
      // The open period passes while the second batch (claimed before the opening) is still out.
      now += 150;
      gates[1]!();
      const openings = () => events.filter((e) => e.type === 'circuit-opened').length;
      await waitFor(() => gates.length >= 3 || openings() >= 2);
      // One opening; the batch that was already out when it opened is no probe.
      expect(events.flatMap((e) => (e.type === 'circuit-opened' ? [e.openMs] : []))).toEqual([100]);
      // The first claim after the opening is the probe: probeBatchSize rows.
      expect(sizes[2]).toBe(1);
      brokerUp = true;
      gates[2]?.();
      await waitFor(async () => (await countWhere('SENT')) === 20);
    } finally {
      await r.close();
    }
  });
});

describe('pipelined relay closing', () => {
  it('reports a completion that fails while close() drains the batches in flight', async () => {
    await emitMany(
      t.db,
      Array.from({ length: 4 }, (_, i) => ({ type: 'closing', payload: { i } })),
    );
    const store = relayStore(t.db);
    const failing = {
      ...store,
      complete: async () => {
        throw new Error('connection terminated during close');
      },
    };
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let calls = 0;
    const publisher: Publisher = {
      async publish(messages) {
        calls += 1;
        await gate;
        return messages.map((m) => ({ id: m.id, status: 'sent' as const }));
      },
    };
    const events: OutboxEvent[] = [];
    const r = relayWith(publisher, {}, { store: failing, events });
    r.start();
    await waitFor(() => calls === 2);
    const closed = r.close();
    open();
    await closed;
    // Both batches (3 rows and 1) were published and their completion failed: two failures.
    expect(calls).toBe(2);
    const failures = events.filter((e) => e.type === 'infrastructure-error');
    expect(failures).toHaveLength(2);
    for (const failure of failures)
      expect(failure).toMatchObject({ error: expect.stringContaining('terminated') });
  });
});

describe('pipelined relay backing off', () => {
  it('backs off longer after each failed completion, a successful claim in between notwithstanding', async () => {
    await emitMany(
      t.db,
      Array.from({ length: 60 }, (_, i) => ({ type: 'backoff', payload: { i } })),
    );
    const store = relayStore(t.db);
    const failing = {
      ...store,
      complete: async () => {
        throw new Error('permission denied for table outbox_events');
      },
    };
    const delays: number[] = [];
    const logger = pino(
      { level: 'error' },
      {
        write: (line: string) => {
          const entry = JSON.parse(line) as { msg?: string; delayMs?: number };
          if (entry.msg === 'outbox relay cycle failed' && entry.delayMs !== undefined)
            delays.push(entry.delayMs);
        },
      },
    );
    const r = createRelay({
      db: t.db,
      publisher: new CheckingPublisher(() => 'sent'),
      store: failing,
      logger,
      options: { batchSize: 3, pipelineDepth: 2, pollInterval: 20, errorBackoff: 20 },
    });
    r.start();
    try {
      await waitFor(() => delays.length >= 4);
    } finally {
      await r.close();
    }
    // Every cycle failed: the wait doubles each time, as it does while claims fail.
    expect(delays.slice(0, 4)).toEqual([20, 40, 80, 160]);
  });
});
