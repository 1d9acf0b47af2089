import { randomUUID } from 'node:crypto';
import { createRelay, emitMany, fromPrisma, type OutboxMessage, type Publisher } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { drainAll, expireLeases, relay, silent, statusOf } from './helpers';

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

async function emitN(n: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const events = Array.from({ length: n }, (_, i) => ({ type: 'test.event', payload: { i }, ...extra }));
  return (await emitMany(t.db, events)).ids;
}

describe('relay', () => {
  it('two contending relays never deliver one event twice in their first attempt', async () => {
    const ids = await emitN(600);
    const a = new InMemoryPublisher();
    const b = new InMemoryPublisher();
    const ra = relay(fromPrisma(t.newClient({ max: 3 })), a, { batchSize: 50 });
    const rb = relay(fromPrisma(t.newClient({ max: 3 })), b, { batchSize: 50 });
    await Promise.all([drainAll(ra, t.db), drainAll(rb, t.db)]);
    const delivered = [...a.delivered, ...b.delivered];
    expect(delivered.every((m) => m.attempt === 1)).toBe(true);
    expect(delivered.map((m) => m.id).sort()).toEqual([...ids].sort());
    expect(a.delivered.length).toBeGreaterThan(0);
    expect(b.delivered.length).toBeGreaterThan(0);
  });

  it('redelivers exactly once more after a crash between broker accept and SENT, without spending a retry', async () => {
    const [id] = await emitN(1);
    const broker = new InMemoryPublisher();
    const store = relayStore(t.db);
    // The "crashed" relay: claims, the broker accepts, and it dies before completing.
    const claim = await store.claim({ token: randomUUID(), limit: 10, leaseMs: 60_000, failedHead: 'block' });
    await broker.publish(
      claim.rows.map((r) => ({ id: r.id }) as OutboxMessage),
      new AbortController().signal,
    );
    await expireLeases(t.db);
    const survivor = relay(t.db, broker);
    const first = await survivor.runOnce();
    expect(first).toMatchObject({ recovered: 1, claimed: 1, sent: 1 });
    for (let i = 0; i < 12; i += 1) await survivor.runOnce();
    expect(broker.deliveryCounts().get(id!)).toBe(2);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'SENT', retry_count: 0, claim_count: 2 });
  });

  it('a stale claim token cannot complete, and the newer claim still can', async () => {
    const [id] = await emitN(1);
    const store = relayStore(t.db);
    const stale = randomUUID();
    await store.claim({ token: stale, limit: 1, leaseMs: 60_000, failedHead: 'block' });
    await expireLeases(t.db);
    expect(await store.complete(stale, [{ id: id!, kind: 'sent', error: null, delayMs: 0 }])).toEqual([]);
    expect(await store.recover({ limit: 10, maxClaims: 10 })).toEqual({ requeued: 1, poisoned: [] });
    const fresh = randomUUID();
    await store.claim({ token: fresh, limit: 1, leaseMs: 60_000, failedHead: 'block' });
    expect(await store.complete(stale, [{ id: id!, kind: 'sent', error: null, delayMs: 0 }])).toEqual([]);
    expect(await store.renew(stale, { leaseMs: 60_000, heartbeatIntervalMs: 10_000 })).toBe(0);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PROCESSING', claim_token: fresh });
    expect(await store.complete(fresh, [{ id: id!, kind: 'sent', error: null, delayMs: 0 }])).toHaveLength(1);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'SENT' });
  });

  it('retries with backoff from the database clock and ends FAILED with last_error after maxRetries attempts', async () => {
    const [id] = await emitN(1, { maxRetries: 3 });
    const failing = new InMemoryPublisher({ decide: () => ({ retryable: 'broker said no' }) });
    const r = relay(t.db, failing, { retry: { initialDelay: 0 } });
    expect(await r.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
    expect(await statusOf(t.db, id!)).toMatchObject({
      status: 'PENDING',
      retry_count: 1,
      last_error: 'broker said no',
    });
    await r.runOnce();
    expect(await r.runOnce()).toMatchObject({ failed: 1 });
    expect(await statusOf(t.db, id!)).toMatchObject({
      status: 'FAILED',
      retry_count: 3,
      last_error: 'broker said no',
    });
    expect(failing.attempts.map((m) => m.attempt)).toEqual([1, 2, 3]);
  });

  it('a permanent outcome fails at once; a thrown publish counts as retryable for every message', async () => {
    const [p] = await emitN(1);
    await relay(t.db, new InMemoryPublisher({ decide: () => ({ permanent: 'schema rejected' }) })).runOnce();
    expect(await statusOf(t.db, p!)).toMatchObject({
      status: 'FAILED',
      retry_count: 1,
      last_error: 'schema rejected',
    });
    const [q] = await emitN(1);
    const throwing: Publisher = { publish: () => Promise.reject(new Error('connection reset')) };
    await relay(t.db, throwing).runOnce();
    expect(await statusOf(t.db, q!)).toMatchObject({
      status: 'PENDING',
      retry_count: 1,
      last_error: 'publish failed: connection reset',
    });
  });

  it('keeps the persisted due time when relays with different backoffs poll', async () => {
    const [id] = await emitN(1);
    const slow = relay(t.db, new InMemoryPublisher({ decide: () => ({ retryable: 'x' }) }), {
      retry: { initialDelay: 60_000 },
    });
    await slow.runOnce();
    const eager = new InMemoryPublisher();
    const fast = relay(t.db, eager, { retry: { initialDelay: 1, backoff: 'fixed' } });
    for (let i = 0; i < 3; i += 1) expect((await fast.runOnce()).claimed).toBe(0);
    expect(eager.attempts).toHaveLength(0);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PENDING', gap_ms: 60_000 });
    const record = await createRelayAdminGet(id!);
    expect(record).toBeInstanceOf(Date);
  });

  it('recovers expired leases without spending retries, and the poison guard fails a row that keeps dying', async () => {
    const [id] = await emitN(1);
    const store = relayStore(t.db);
    const failures: unknown[] = [];
    for (let i = 0; i < 3; i += 1) {
      expect(
        (await store.claim({ token: randomUUID(), limit: 1, leaseMs: 60_000, failedHead: 'block' })).rows,
      ).toHaveLength(1);
      await expireLeases(t.db);
      const observed: unknown[] = [];
      const r = createRelay({
        db: t.db,
        publisher: new InMemoryPublisher(),
        options: { poisonGuard: { maxClaims: 3 }, batchSize: 1 },
        logger: silent,
        observer: (e) => {
          if (e.type === 'recovered') observed.push(e);
          if (e.type === 'failed') failures.push(e);
        },
        store: { ...store, claim: async () => ({ rows: [], skippedIds: [] }) },
      });
      const result = await r.runOnce();
      expect(observed).toHaveLength(1);
      if (i < 2) expect(result).toMatchObject({ recovered: 1, poisoned: 0 });
      else expect(result).toMatchObject({ recovered: 0, poisoned: 1 });
    }
    const row = await statusOf(t.db, id!);
    expect(row).toMatchObject({ status: 'FAILED', retry_count: 0, claim_count: 3 });
    expect(failures).toEqual([
      expect.objectContaining({ type: 'failed', id, eventType: 'test.event', reason: 'poison_guard' }),
    ]);
    expect(row.last_error).toMatch(/poison guard: the lease expired 3 times in a row/);
  });

  it('runs recovery on the first and every tenth cycle, bounded per statement', async () => {
    await emitN(5);
    const store = relayStore(t.db);
    await store.claim({ token: randomUUID(), limit: 5, leaseMs: 60_000, failedHead: 'block' });
    await expireLeases(t.db);
    const idle = { ...store, claim: async () => ({ rows: [], skippedIds: [] }) };
    const r = createRelay({
      db: t.db,
      publisher: new InMemoryPublisher(),
      options: { recoveryBatchSize: 2 },
      logger: silent,
      store: idle,
    });
    const recovered: number[] = [];
    for (let i = 0; i < 21; i += 1) recovered.push((await r.runOnce()).recovered);
    expect(recovered.filter((n, i) => n > 0 && i % 10 !== 0)).toEqual([]);
    expect(recovered.filter((n) => n > 0)).toEqual([2, 2, 1]);
  });
});

async function createRelayAdminGet(id: string): Promise<Date | undefined> {
  const { createOutboxAdmin } = await import('@ferry/core');
  return (await createOutboxAdmin(t.db).get(id))?.nextAttemptAt;
}
