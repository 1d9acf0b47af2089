/**
 * One destination the broker cannot take (its publishes answer `unavailable`) while the others are
 * fine: the events of the healthy destinations must go out within a number of relay cycles that
 * does not grow with the dead destination's backlog (docs/outbox.md, Broker outages).
 *
 * A fake publisher (pure logic: `unavailable` for one destination, `sent` for the others), the
 * real relay on PostgreSQL, the breaker's clock injected (an open period passes at once). Healthy
 * events are emitted before the relay first runs (behind the dead backlog), one every few cycles
 * during the outage, and after it; the dead backlog is many batches long; keyed and unkeyed
 * events; failureThreshold 1 and more; one relay and two on the same table. The circuit flaps:
 * a probe that takes a healthy event closes it, the next closed claim takes dead rows and opens it.
 *
 * Failed first: a failed probe held back (unavailableHold.ts) at most ten batches of the dead
 * destination's due rows, and rows a closed or mixed cycle handed back went behind every due row
 * (releaseClaims) but ahead of the healthy events emitted after them, so a healthy event waited
 * one failed probe per ten batches of dead backlog: with batchSize 20 and 3,000 dead rows,
 * about 15 probes each; with the defaults and 12,000 dead rows, 3.
 */
import {
  createRelay,
  emit,
  OUTBOX_DEFAULTS,
  type OutboxMessage,
  type OutboxOptions,
  type Relay,
} from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { silent } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

interface Scenario {
  readonly dead: number;
  readonly keyed: boolean;
  readonly options: OutboxOptions;
  readonly relays: 1 | 2;
}

/** Cycles of the outage (healthy events emitted during it), then it ends. */
const OUTAGE_CYCLES = 60;
/** A healthy event is emitted every this many cycles of the outage. */
const EMIT_EVERY = 5;
/** Cycles after the outage within which everything must be sent (a deadline, not the bound). */
const DRAIN_CYCLES = 600;

interface Outcome {
  /** Per healthy event emitted before or during the outage: the cycles it waited to be sent. */
  readonly waited: number[];
  /** Ids never sent (healthy or dead) when the run ended. */
  readonly unsent: number;
  /** Ordering keys whose events were first delivered out of seq order. */
  readonly disordered: string[];
}

async function run({ dead, keyed, options, relays: count }: Scenario): Promise<Outcome> {
  await t.db.execute('DELETE FROM outbox_events');
  // The dead backlog as emitMany writes it in batches of 500 (seq in order, keyed on 97 keys or
  // unkeyed, payload_bytes the payload's text), inserted in SQL: validating up to 12,000 events
  // through emitMany cost a good part of this file's CPU, and the relay reads them alike.
  for (let i = 0; i < dead; i += 500)
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, destination, ordering_key, payload, max_retries, payload_bytes)
       SELECT gen_random_uuid(), 'down', 'queue-down', CASE WHEN $3 THEN 'dead-' || (g % 97) END, p, $4,
         octet_length(p::text)
       FROM generate_series($1::int, $2::int - 1) g, jsonb_build_object('i', g) p ORDER BY g`,
      [i, Math.min(i + 500, dead), keyed, OUTBOX_DEFAULTS['retry.maxRetries'].default],
    );
  let outage = true;
  const publisher = new InMemoryPublisher({
    decide: (message: OutboxMessage) =>
      outage && message.destination === 'queue-down' ? { unavailable: 'AccessDenied on queue-down' } : 'sent',
  });
  let now = 1_000_000;
  const relays: Relay[] = Array.from({ length: count }, () =>
    createRelay({ db: t.db, publisher, logger: silent, clock: () => now, options }),
  );
  const emittedAt = new Map<string, number>();
  const waited: number[] = [];
  const healthy = async (cycle: number, key: string): Promise<void> => {
    const { id } = await emit(t.db, {
      type: 'up',
      destination: `queue-up-${cycle % 2}`,
      payload: { cycle },
      ...(keyed ? { orderingKey: key } : {}),
    });
    emittedAt.set(id, cycle);
  };
  await healthy(0, 'up-before');
  let seen = 0;
  try {
    for (let cycle = 0; cycle < OUTAGE_CYCLES + DRAIN_CYCLES; cycle += 1) {
      if (cycle === OUTAGE_CYCLES) {
        outage = false;
        await healthy(cycle, 'up-after');
      } else if (cycle < OUTAGE_CYCLES && cycle % EMIT_EVERY === 2) await healthy(cycle, `up-${cycle % 3}`);
      const relay = relays[cycle % count] as Relay;
      if (relay.circuit === 'open') now += relay.options.circuit.maxOpenMs + 1; // the open period passes
      await relay.runOnce();
      for (const message of publisher.delivered.slice(seen)) {
        const at = emittedAt.get(message.id);
        if (at !== undefined && at < OUTAGE_CYCLES) waited.push(cycle - at);
        emittedAt.delete(message.id);
      }
      seen = publisher.delivered.length;
      if (!outage && emittedAt.size === 0) {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
        );
        if (row?.n === 0) break;
      }
    }
  } finally {
    for (const relay of relays) await relay.close();
  }
  const [unsent] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT' OR retry_count > 0`,
  );
  const seqs = new Map(
    (
      await t.db.query<{ id: string; seq: string }>(
        `SELECT id::text AS id, seq::text AS seq FROM outbox_events`,
      )
    ).map((row) => [row.id, BigInt(row.seq)]),
  );
  const lastSeq = new Map<string, bigint>();
  const disordered = new Set<string>();
  const first = new Set<string>();
  for (const message of publisher.delivered) {
    if (first.has(message.id) || message.orderingKey == null) continue;
    first.add(message.id);
    const seq = seqs.get(message.id) ?? 0n;
    if ((lastSeq.get(message.orderingKey) ?? -1n) > seq) disordered.add(message.orderingKey);
    lastSeq.set(message.orderingKey, seq);
  }
  return { waited, unsent: (unsent?.n ?? 0) + emittedAt.size, disordered: [...disordered] };
}

/**
 * The bound, in cycles, for one relay: at most `failureThreshold` closed cycles of dead rows (the
 * circuit opens), then the probe takes the healthy event; one more for an event emitted while the
 * closed cycles ran. Two relays take turns, so twice that.
 */
function bound(scenario: Scenario): number {
  const threshold = scenario.options.circuit?.failureThreshold ?? 1;
  return (threshold + 2) * scenario.relays;
}

async function expectBounded(scenario: Scenario): Promise<void> {
  const outcome = await run(scenario);
  expect(outcome.waited).toHaveLength(1 + Math.ceil((OUTAGE_CYCLES - 2) / EMIT_EVERY));
  expect(Math.max(...outcome.waited)).toBeLessThanOrEqual(bound(scenario));
  expect(outcome.unsent).toBe(0);
  expect(outcome.disordered).toEqual([]);
}

it('unkeyed, default options, a dead backlog of 24 batches: healthy events wait a bounded number of cycles', async () => {
  // On main: a failed probe per ten batches of dead backlog, up to 5 cycles each.
  await expectBounded({ dead: 12_000, keyed: false, options: {}, relays: 1 });
}, 120_000);

it('keyed: the dead backlog spread over many keys does not hold the healthy keys back', async () => {
  // On main: up to 17 cycles.
  await expectBounded({ dead: 3_000, keyed: true, options: { batchSize: 20 }, relays: 1 });
}, 120_000);

it('failureThreshold 3: healthy events wait at most the closed cycles that open the circuit and a probe', async () => {
  await expectBounded({
    dead: 3_000,
    keyed: false,
    options: { batchSize: 20, circuit: { failureThreshold: 3 } },
    relays: 1,
  });
}, 120_000);

it('two relays on the same table, keyed, failureThreshold 2', async () => {
  await expectBounded({
    dead: 3_000,
    keyed: true,
    options: { batchSize: 20, circuit: { failureThreshold: 2 } },
    relays: 2,
  });
}, 120_000);

it('the bound does not grow with the dead backlog (50 rows and 3,000 rows wait alike)', async () => {
  const small = await run({ dead: 50, keyed: false, options: { batchSize: 20 }, relays: 1 });
  const large = await run({ dead: 3_000, keyed: false, options: { batchSize: 20 }, relays: 1 });
  expect(Math.max(...large.waited)).toBeLessThanOrEqual(Math.max(...small.waited, 3));
}, 120_000);
