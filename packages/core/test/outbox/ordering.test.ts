import {
  createRelay,
  emitMany,
  fromPrisma,
  type OutboxMessage,
  type Publisher,
  type PublishOutcome,
} from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { InMemoryPublisher } from '@ferry/testing';
import { drainAll, relay, silent, statusOf } from './helpers';

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

/** Records publish order per key and fails if two events of one key are ever in flight together. */
class OrderCheckingPublisher implements Publisher {
  readonly sentOrder = new Map<string, number[]>();
  readonly inFlight = new Set<string>();
  overlaps = 0;
  constructor(private readonly failureRate: number) {}

  async publish(messages: readonly OutboxMessage[]): Promise<readonly PublishOutcome[]> {
    const keys = messages.map((m) => m.orderingKey).filter((k): k is string => k !== null);
    for (const key of keys) {
      if (this.inFlight.has(key)) this.overlaps += 1;
      this.inFlight.add(key);
    }
    await new Promise((resolve) => setImmediate(resolve));
    const outcomes = messages.map((m): PublishOutcome => {
      if (Math.random() < this.failureRate) return { id: m.id, status: 'retryable', error: 'random' };
      if (m.orderingKey !== null) {
        const list = this.sentOrder.get(m.orderingKey) ?? [];
        list.push(m.payload.n as number);
        this.sentOrder.set(m.orderingKey, list);
      }
      return { id: m.id, status: 'sent' };
    });
    for (const key of keys) this.inFlight.delete(key);
    return outcomes;
  }
}

describe('ordering', () => {
  it('keeps insertion order per key with 4 relays and random publish failures; unkeyed events flow in parallel', async () => {
    const keys = 40;
    const perKey = 60;
    const events = [];
    for (let n = 0; n < perKey; n += 1) {
      for (let k = 0; k < keys; k += 1)
        events.push({ type: 'ordered', payload: { n }, orderingKey: `key-${k}`, maxRetries: 1_000 });
    }
    events.push(
      ...Array.from({ length: 400 }, (_, n) => ({ type: 'free', payload: { n }, maxRetries: 1_000 })),
    );
    for (let i = 0; i < events.length; i += 500) await emitMany(t.db, events.slice(i, i + 500));
    // One publisher shared by the four relays sees every in-flight message across processes.
    const publisher = new OrderCheckingPublisher(0.2);
    // max_retries is stored per row at emit time (above), so random failures never exhaust it.
    const options = { batchSize: 100, retry: { initialDelay: 0 } };
    const relays = Array.from({ length: 4 }, () =>
      relay(fromPrisma(t.newClient({ max: 2 })), publisher, options),
    );
    await Promise.all(relays.map((r) => drainAll(r, t.db, 100_000))).catch(async (error: unknown) => {
      const diagnosis = await t.db.query(
        `SELECT status, count(*)::int AS n, max(retry_count) AS max_retry, min(next_attempt_at)::text AS due,
           max(lease_expires_at)::text AS lease, now()::text AS now FROM outbox_events GROUP BY status`,
      );
      console.log(
        'ordering stalled',
        JSON.stringify(diagnosis),
        relays.map((r) => r.cycles),
      );
      throw error;
    });
    console.log(`ordering: ${events.length} events (${keys * perKey} keyed) through 4 relays`);
    expect(publisher.overlaps).toBe(0);
    expect(publisher.sentOrder.size).toBe(keys);
    for (const list of publisher.sentOrder.values()) {
      expect(list).toEqual(Array.from({ length: perKey }, (_, n) => n));
    }
    console.log(`ordering: relay cycles ${relays.map((r) => r.cycles).join(', ')}`);
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`,
    );
    expect(row?.n).toBe(0);
  }, 150_000);

  it("a FAILED head blocks its key under 'block'", async () => {
    const { ids } = await emitMany(t.db, [
      { type: 'o', payload: { n: 0 }, orderingKey: 'k' },
      { type: 'o', payload: { n: 1 }, orderingKey: 'k' },
      { type: 'o', payload: { n: 2 }, orderingKey: 'other' },
    ]);
    const publisher = new InMemoryPublisher({
      decide: (m) => (m.payload.n === 0 ? { permanent: 'bad' } : 'sent'),
    });
    const r = relay(t.db, publisher, { ordering: { failedHead: 'block' } });
    await r.runOnce();
    await r.runOnce();
    expect(await statusOf(t.db, ids[0]!)).toMatchObject({ status: 'FAILED' });
    expect(await statusOf(t.db, ids[1]!)).toMatchObject({ status: 'PENDING' });
    expect(await statusOf(t.db, ids[2]!)).toMatchObject({ status: 'SENT' });
  });

  it("a FAILED head is skipped and the skip recorded under 'skip'", async () => {
    const { ids } = await emitMany(t.db, [
      { type: 'o', payload: { n: 0 }, orderingKey: 'k' },
      { type: 'o', payload: { n: 1 }, orderingKey: 'k' },
    ]);
    const publisher = new InMemoryPublisher({
      decide: (m) => (m.payload.n === 0 ? { permanent: 'bad' } : 'sent'),
    });
    const skipped: unknown[] = [];
    const r = createRelay({
      db: t.db,
      publisher,
      options: { ordering: { failedHead: 'skip' } },
      logger: silent,
      observer: (e) => void (e.type === 'ordering-skipped' && skipped.push(e)),
    });
    await r.runOnce();
    await r.runOnce();
    expect(await statusOf(t.db, ids[1]!)).toMatchObject({ status: 'SENT' });
    const [head] = await t.db.query<{ skipped: boolean }>(
      'SELECT skipped_at IS NOT NULL AS skipped FROM outbox_events WHERE id = $1::uuid',
      [ids[0]],
    );
    expect(head?.skipped).toBe(true);
    expect(skipped).toEqual([{ type: 'ordering-skipped', skippedIds: [ids[0]] }]);
  });
});
