/**
 * A claim's memory is bounded by bytes as well as by count: whatever the rows' sizes, no claim
 * (so no publish call) carries more than `maxBatchBytes` of payload text, except a claim of one
 * row, which is always taken (an event larger than the bound is still relayed, alone). Rows the
 * bound leaves out stay PENDING, unclaimed and unspent, and keys still publish in order.
 */
import { randomBytes } from 'node:crypto';
import { createEmitter, createRelay, type OutboxMessage, type Publisher, type Relay } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher } from '@ferry/testing';
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

const MiB = 1024 * 1024;
const BOUND = 4 * MiB;
const big = createEmitter({ limits: { maxPayloadBytes: 16 * MiB } });

/** A payload whose text is about `bytes` long. */
const blob = (n: number, bytes = MiB - 100) => ({ n, blob: 'x'.repeat(bytes) });

/** The payload's bytes as the relay holds them: its JSON text, as PostgreSQL writes it. */
async function storedBytes(ids: readonly string[]): Promise<Map<string, number>> {
  const rows = await t.db.query<{ id: string; bytes: number }>(
    `SELECT id::text AS id, octet_length(payload::text) AS bytes FROM outbox_events WHERE id = ANY ($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.bytes]));
}

/** A publisher that records each call's messages. */
function recording(): { publisher: Publisher; calls: OutboxMessage[][]; inner: InMemoryPublisher } {
  const inner = new InMemoryPublisher();
  const calls: OutboxMessage[][] = [];
  const publisher: Publisher = {
    publish: (messages, signal) => {
      calls.push([...messages]);
      return inner.publish(messages, signal);
    },
  };
  return { publisher, calls, inner };
}

/** Twelve events of about 1 MiB: six unkeyed, three each of keys 'a' and 'b'. */
async function emitBacklog(): Promise<string[]> {
  const events = Array.from({ length: 12 }, (_, n) => ({
    type: 'big',
    payload: blob(n),
    orderingKey: n < 6 ? undefined : n % 2 === 0 ? 'a' : 'b',
  }));
  return (await big.emitMany(t.db, events)).ids;
}

async function expectAllSentInKeyOrder(calls: OutboxMessage[][], ids: readonly string[]): Promise<void> {
  const sizes = await storedBytes(ids);
  for (const call of calls) {
    expect(call.length).toBeGreaterThanOrEqual(1);
    const bytes = call.reduce((sum, m) => sum + (sizes.get(m.id) ?? Infinity), 0);
    if (call.length > 1) expect(bytes).toBeLessThanOrEqual(BOUND);
  }
  const delivered = calls.flat();
  expect(new Set(delivered.map((m) => m.id))).toEqual(new Set(ids));
  for (const key of ['a', 'b']) {
    const order = delivered.filter((m) => m.orderingKey === key).map((m) => (m.payload as { n: number }).n);
    expect(order).toEqual([...order].sort((x, y) => x - y));
  }
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
  );
  expect(row?.n).toBe(0);
}

async function drain(relay: Relay): Promise<void> {
  await waitFor(async () => {
    await relay.runOnce();
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status IN ('PENDING', 'PROCESSING')`,
    );
    return row?.n === 0;
  });
}

describe('a claim bounded by maxBatchBytes', () => {
  it('takes rows in due order while their payloads fit, leaving the rest PENDING and unspent', async () => {
    const ids = await emitBacklog();
    const sizes = await storedBytes(ids);
    const claim = await relayStore(t.db).claim({
      token: '00000000-0000-4000-8000-0000000000b1',
      limit: 500,
      maxBytes: BOUND,
      leaseMs: 60_000,
      failedHead: 'block',
    });
    const bytes = claim.rows.reduce((sum, r) => sum + (sizes.get(r.id) ?? 0), 0);
    expect({ rows: claim.rows.length, withinBound: bytes <= BOUND }).toEqual({ rows: 4, withinBound: true });
    const left = await t.db.query<{ status: string; claim_count: number; retry_count: number }>(
      `SELECT status, claim_count, retry_count FROM outbox_events WHERE id <> ALL ($1::uuid[])`,
      [claim.rows.map((r) => r.id)],
    );
    expect(left).toHaveLength(8);
    expect(left.every((r) => r.status === 'PENDING' && r.claim_count === 0 && r.retry_count === 0)).toBe(
      true,
    );
  });

  it('takes a single row larger than the bound, alone', async () => {
    const { ids } = await big.emitMany(t.db, [
      { type: 'big', payload: blob(0, 5 * MiB) },
      { type: 'big', payload: blob(1, 10) },
    ]);
    const claim = await relayStore(t.db).claim({
      token: '00000000-0000-4000-8000-0000000000b2',
      limit: 500,
      maxBytes: BOUND,
      leaseMs: 60_000,
      failedHead: 'skip',
    });
    expect(claim.rows.map((r) => r.id)).toEqual([ids[0]]);
  });

  it("counts the bytes of all the claim's statements (the key scan after the due window)", async () => {
    // The due window (2 × limit rows) holds the unkeyed 3 MiB row and key z's rows blocked behind
    // its FAILED head: the first statement claims that row alone, the key scan finds a and b.
    const { ids } = await big.emitMany(t.db, [
      { type: 'big', payload: blob(0, 3 * MiB - 100) },
      ...Array.from({ length: 7 }, (_, n) => ({ type: 'z', payload: { n }, orderingKey: 'z' })),
      { type: 'big', payload: blob(1), orderingKey: 'a' },
      { type: 'big', payload: blob(2), orderingKey: 'b' },
    ]);
    await t.db.execute(`UPDATE outbox_events SET status = 'FAILED', failed_at = now() WHERE id = $1::uuid`, [
      ids[1],
    ]);
    const claim = await relayStore(t.db).claim({
      token: '00000000-0000-4000-8000-0000000000b5',
      limit: 3,
      maxBytes: BOUND,
      leaseMs: 60_000,
      failedHead: 'block',
    });
    expect(claim.rows.map((r) => r.id)).toEqual([ids[0], ids[8]]);
  });

  it("a half-open probe's claim (store.probe) keeps the bound, each of its steps", async () => {
    const ids = await emitBacklog();
    const sizes = await storedBytes(ids);
    const store = relayStore(t.db);
    const probe = (token: string, refused: (string | null)[]) =>
      store.probe({
        token,
        limit: 500,
        maxBytes: BOUND,
        leaseMs: 60_000,
        failedHead: 'block',
        refused,
        cursor: null,
      });
    const taken = (rows: readonly { id: string }[]) =>
      rows.reduce((sum, r) => sum + (sizes.get(r.id) ?? 0), 0);
    // From the destinations not refused ('others'), then from the refused default one.
    const others = await probe('00000000-0000-4000-8000-0000000000b3', ['elsewhere']);
    const refused = await probe('00000000-0000-4000-8000-0000000000b4', [null]);
    expect([others.rows.length, taken(others.rows) <= BOUND]).toEqual([4, true]);
    expect([refused.rows.length, taken(refused.rows) <= BOUND]).toEqual([4, true]);
  });

  it("counts each payload by the bytes emit measured (payload_bytes), its jsonb text's in UTF-8, as the claim returns it", async () => {
    const payloads = [
      { n: 0, text: 'ascii' },
      { n: 1, text: 'zwölf Ünïcödé 🚀', nested: { list: [1, 'two'] } },
    ];
    const { ids } = await big.emitMany(
      t.db,
      payloads.map((payload) => ({ type: 'small', payload })),
    );
    const rows = await t.db.query<{ id: string; payload_bytes: number }>(
      `SELECT id::text AS id, payload_bytes FROM outbox_events ORDER BY seq`,
    );
    const sizes = await storedBytes(ids);
    expect(rows).toEqual(ids.map((id) => ({ id, payload_bytes: sizes.get(id) })));
  });

  it('counts a row without payload_bytes (stored before migration 0012) by its stored size', async () => {
    // Random base64 does not compress: its stored size is about its text's. Counted as nothing,
    // the three 1.5 MiB rows would all be claimed; counted, two fit within 4 MiB.
    const payload = (n: number) => ({ n, blob: randomBytes(MiB + MiB / 8).toString('base64') });
    const { ids } = await big.emitMany(
      t.db,
      [0, 1, 2].map((n) => ({ type: 'big', payload: payload(n) })),
    );
    await t.db.execute('UPDATE outbox_events SET payload_bytes = NULL');
    const claim = await relayStore(t.db).claim({
      token: '00000000-0000-4000-8000-0000000000b6',
      limit: 500,
      maxBytes: BOUND,
      leaseMs: 60_000,
      failedHead: 'block',
    });
    expect(claim.rows.map((r) => r.id)).toEqual(ids.slice(0, 2));
    // The first row is claimed alone whatever its size, with or without payload_bytes.
    const alone = await relayStore(t.db).claim({
      token: '00000000-0000-4000-8000-0000000000b7',
      limit: 500,
      maxBytes: 1,
      leaseMs: 60_000,
      failedHead: 'skip',
    });
    expect(alone.rows.map((r) => r.id)).toEqual([ids[2]]);
  });

  it('relay cycles (runOnce) publish every event, no call over the bound, keys in order', async () => {
    const ids = await emitBacklog();
    const { publisher, calls } = recording();
    const relay = createRelay({ db: t.db, publisher, logger: silent, options: { maxBatchBytes: BOUND } });
    await drain(relay);
    await relay.close();
    expect(calls.length).toBeGreaterThanOrEqual(3);
    await expectAllSentInKeyOrder(calls, ids);
  });

  it("pipelined cycles (start) and the 'skip' policy keep the bound too", async () => {
    const ids = await emitBacklog();
    const { publisher, calls } = recording();
    const relay = createRelay({
      db: t.db,
      publisher,
      logger: silent,
      options: { maxBatchBytes: BOUND, pipelineDepth: 3, pollInterval: 20, ordering: { failedHead: 'skip' } },
    });
    relay.start();
    try {
      await waitFor(async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
        );
        return row?.n === 0;
      });
    } finally {
      await relay.close();
    }
    await expectAllSentInKeyOrder(calls, ids);
  });
});
