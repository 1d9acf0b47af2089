import { randomUUID } from 'node:crypto';
import { createOutboxAdmin, emitMany, fromPrisma, type OutboxMessage, type SqlExecutor } from '@ferry/core';
import { relayStore, type RelayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { relay, statusOf, waitFor } from './helpers';

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

/** A publisher that holds every message until the test releases it. */
function gatedPublisher() {
  const waiting: (() => void)[] = [];
  const publisher = new InMemoryPublisher({
    decide: (m: OutboxMessage) =>
      m.payload.n === 0
        ? { permanent: 'bad head' }
        : new Promise<'sent'>((resolve) => waiting.push(() => resolve('sent'))),
  });
  return { publisher, waiting };
}

const skip = { ordering: { failedHead: 'skip' as const } };

describe("failedHead 'skip': a retried skipped head", () => {
  it('is not claimed while its successor is in flight, and goes out right after it', async () => {
    const { ids } = await emitMany(
      t.db,
      [0, 1, 2].map((n) => ({ type: 'o', payload: { n }, orderingKey: 'k' })),
    );
    const [head, successor, third] = ids as [string, string, string];
    const { publisher, waiting } = gatedPublisher();
    const a = relay(t.db, publisher, skip);
    await a.runOnce();
    expect(await statusOf(t.db, head)).toMatchObject({ status: 'FAILED' });
    const inFlight = a.runOnce();
    await waitFor(() => waiting.length === 1);
    expect(await statusOf(t.db, successor)).toMatchObject({ status: 'PROCESSING' });

    expect(await createOutboxAdmin(t.db).retry(head)).toMatchObject({ outcome: 'applied' });
    const b = relay(t.db, new InMemoryPublisher(), skip);
    expect((await b.runOnce()).claimed).toBe(0);
    expect(await statusOf(t.db, head)).toMatchObject({ status: 'PENDING' });

    waiting.shift()?.();
    expect((await inFlight).sent).toBe(1);
    // The retried head retakes its insertion-order place among the key's unpublished events.
    const next = await relayStore(t.db).claim({
      token: '00000000-0000-4000-8000-000000000001',
      limit: 10,
      leaseMs: 60_000,
      failedHead: 'skip',
    });
    expect(next.rows.map((r) => r.id)).toEqual([head]);
    expect(await statusOf(t.db, third)).toMatchObject({ status: 'PENDING' });
  });
});

describe("failedHead 'skip': an operator retry racing a claim past the FAILED head", () => {
  it('makes the claim leave the successor alone once the retry commits', async () => {
    const { ids } = await emitMany(t.db, [
      { type: 'o', payload: { n: 0 }, orderingKey: 'k' },
      { type: 'o', payload: { n: 1 }, orderingKey: 'k' },
    ]);
    const [head, successor] = ids as [string, string];
    await relay(t.db, new InMemoryPublisher({ decide: () => ({ permanent: 'bad' }) }), skip).runOnce();
    expect(await statusOf(t.db, head)).toMatchObject({ status: 'FAILED' });
    const other = fromPrisma(t.newClient({ max: 1 }));
    let claim: ReturnType<RelayStore['claim']> | undefined;
    let settled = false;
    await t.db.transaction(async (tx) => {
      expect(await createOutboxAdmin(tx).retry(head)).toMatchObject({ outcome: 'applied' });
      // The claim's snapshot still sees the head FAILED; it must wait for this retry.
      claim = relayStore(other).claim({
        token: randomUUID(),
        limit: 10,
        leaseMs: 60_000,
        failedHead: 'skip',
      });
      void claim.finally(() => (settled = true));
      await waitFor(async () => settled || (await waitingOnLock(t.db)));
    });
    const rows = (await claim!).rows.map((r) => r.id);
    expect(rows).not.toContain(successor);
    expect(await statusOf(t.db, successor)).toMatchObject({ status: 'PENDING' });
  });
});

async function waitingOnLock(db: SqlExecutor): Promise<boolean> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return (row?.n ?? 0) > 0;
}

describe('a blocked key with a long backlog', () => {
  const backlog = 3_000;
  const cases = [
    { policy: 'block' as const, blockedBy: 'a FAILED head' },
    { policy: 'skip' as const, blockedBy: 'a head in flight' },
  ];
  it.each(cases)(
    "stays blocked under '$policy' ($blockedBy) while other keys drain",
    async ({ policy }) => {
      const blocked = Array.from({ length: backlog }, (_, n) => ({
        type: 'b',
        payload: { n },
        orderingKey: 'hot',
      }));
      const blockedIds: string[] = [];
      for (let i = 0; i < blocked.length; i += 500)
        blockedIds.push(...(await emitMany(t.db, blocked.slice(i, i + 500))).ids);
      const others = [
        ...Array.from({ length: 60 }, (_, n) => ({
          type: 'k',
          payload: { n },
          orderingKey: `key-${n % 20}`,
        })),
        ...Array.from({ length: 20 }, (_, n) => ({ type: 'u', payload: { n } })),
      ];
      await emitMany(t.db, others);
      const head = blockedIds[0]!;
      if (policy === 'block') {
        await createOutboxAdmin(t.db).markFailed(head, 'operator stopped the key');
      } else {
        const held = await relayStore(t.db).claim({
          token: randomUUID(),
          limit: 1,
          leaseMs: 600_000,
          failedHead: policy,
        });
        expect(held.rows.map((r) => r.id)).toEqual([head]);
      }
      const publisher = new InMemoryPublisher();
      const r = relay(t.db, publisher, { batchSize: 10, ordering: { failedHead: policy } });
      await waitFor(async () => {
        await r.runOnce();
        return publisher.delivered.length === others.length;
      }, 60_000);
      expect(publisher.delivered.filter((m) => m.orderingKey === 'hot')).toEqual([]);
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM outbox_events WHERE ordering_key = 'hot' AND status = 'PENDING'`,
      );
      expect(row?.n).toBe(backlog - 1);
    },
    90_000,
  );
});

describe("failedHead 'skip' under load with an operator retrying FAILED events", () => {
  it('never has two events of one key in flight across 3 relays', async () => {
    const keys = 8;
    const perKey = 25;
    const events = [];
    for (let n = 0; n < perKey; n += 1)
      for (let k = 0; k < keys; k += 1) events.push({ type: 'o', payload: { n }, orderingKey: `key-${k}` });
    await emitMany(t.db, events);
    const inFlight = new Set<string>();
    let overlaps = 0;
    let rounds = 0;
    const publisher = new InMemoryPublisher({
      decide: async (m) => {
        const key = m.orderingKey!;
        if (inFlight.has(key)) overlaps += 1;
        inFlight.add(key);
        // The operator gets a full round (and other relays their claims) while this one is in flight.
        const start = rounds;
        await waitFor(() => rounds > start + 1, 10_000);
        inFlight.delete(key);
        return Math.random() < 0.2 ? { permanent: 'random' } : 'sent';
      },
    });
    const relays = Array.from({ length: 3 }, () =>
      relay(fromPrisma(t.newClient({ max: 2 })), publisher, { batchSize: 4, ...skip }),
    );
    const admin = createOutboxAdmin(t.db);
    const unsent = async () =>
      (
        await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events WHERE status <> 'SENT'`)
      )[0]!.n;
    let done = false;
    const operator = (async () => {
      while (!done) {
        const failed = await t.db.query<{ id: string }>(
          `SELECT id::text AS id FROM outbox_events WHERE status = 'FAILED' LIMIT 50`,
        );
        if (failed.length > 0) await admin.retryMany(failed.map((r) => r.id));
        rounds += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    try {
      await Promise.all(
        relays.map((r) =>
          waitFor(async () => {
            await r.runOnce();
            return (await unsent()) === 0;
          }, 90_000),
        ),
      );
    } finally {
      done = true;
      await operator;
    }
    expect(overlaps).toBe(0);
  }, 120_000);
});
