/**
 * The relay's lighter hot path: leases renewed by primary key (fenced on the token), and
 * onSent 'delete' (a sent event's row deleted at completion, under the same fence).
 */
import { randomUUID } from 'node:crypto';
import vm from 'node:vm';
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createOutboxAdmin, createRelay, emitMany, type SqlExecutor } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { expireLeases, relay, silent, statusOf } from './helpers';

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

async function emitN(n: number): Promise<string[]> {
  return (
    await emitMany(
      t.db,
      Array.from({ length: n }, (_, i) => ({ type: 'hot.path', payload: { i } })),
    )
  ).ids;
}

const sent = (id: string) => ({ id, kind: 'sent' as const, error: null, delayMs: 0 });

/** The executor `db` that records every statement it runs in `statements`. */
function countingStatements(): { db: SqlExecutor; statements: string[] } {
  const statements: string[] = [];
  const db: SqlExecutor = {
    ...t.db,
    query: (text, values) => {
      statements.push(text);
      return t.db.query(text, values);
    },
  };
  return { db, statements };
}

/**
 * 50 events of key 'hot' (sorting before every other key), blocked: under 'block' by a FAILED
 * head, under 'skip' by an event in flight. Then one event each of keys k0 ... k(others - 1).
 */
async function blockedKeyAndOthers(failedHead: 'block' | 'skip', others: number): Promise<void> {
  const hot = await emitMany(
    t.db,
    Array.from({ length: 50 }, (_, i) => ({ type: 'hot', payload: { i }, orderingKey: 'hot' })),
  );
  await createOutboxAdmin(t.db).markFailed(hot.ids[0]!, 'blocked head');
  if (failedHead === 'skip') {
    await t.db.execute(
      `UPDATE outbox_events SET status = 'PROCESSING', claim_token = gen_random_uuid(), failed_at = NULL,
         lease_expires_at = now() + interval '1 minute', claimed_at = now() WHERE id = $1::uuid`,
      [hot.ids[1]],
    );
  }
  await emitMany(
    t.db,
    Array.from({ length: others }, (_, i) => ({ type: 'other', payload: { i }, orderingKey: `k${i}` })),
  );
}

describe('relay hot path', () => {
  // A batch that was all sent stores, observes and traces no error: it redacts none. With a
  // redact.allow RegExp each redaction is a node:vm call (a watchdog thread); counted, not timed.
  it('a batch that was all sent runs no redaction (no allow-pattern vm call)', async () => {
    await emitN(2);
    const r = relay(t.db, new InMemoryPublisher(), { redact: { allow: [/order 9\d{12}/] } });
    const runs = jest.spyOn(vm.Script.prototype, 'runInContext');
    try {
      await expect(r.runOnce()).resolves.toMatchObject({ sent: 2 });
      expect(runs).not.toHaveBeenCalled();
    } finally {
      runs.mockRestore();
      await r.close();
    }
  });

  it('renews by primary key only the rows the token holds', async () => {
    const LEASE = { leaseMs: 60_000, heartbeatIntervalMs: 10_000 };
    await emitN(4);
    const store = relayStore(t.db);
    const a = randomUUID();
    const b = randomUUID();
    const claimA = await store.claim({ token: a, limit: 2, leaseMs: 60_000, failedHead: 'block' });
    const claimB = await store.claim({ token: b, limit: 2, leaseMs: 60_000, failedHead: 'block' });
    const idsA = claimA.rows.map((r) => r.id);
    const idsB = claimB.rows.map((r) => r.id);
    expect(await store.renew(a, LEASE, idsB)).toBe(0);
    expect(await store.renew(a, LEASE, [...idsA, ...idsB])).toBe(2);
    expect(await store.renew(a, LEASE)).toBe(2);
    await expireLeases(t.db);
    expect(await store.renew(a, LEASE, idsA)).toBe(0);
  });

  it.each(['keep', 'delete'] as const)(
    "onSent '%s': sent events are kept as SENT or deleted; failures are kept (retry, FAILED)",
    async (onSent) => {
      const ids = await emitN(4);
      const failing = ids[1]!;
      const refused = ids[3]!;
      const publisher = new InMemoryPublisher({
        decide: (m) =>
          m.id === failing
            ? { retryable: 'broker said no' }
            : m.id === refused
              ? { permanent: 'too big' }
              : 'sent',
      });
      const sentEvents: string[] = [];
      const r = createRelay({
        db: t.db,
        publisher,
        options: { onSent },
        logger: silent,
        observer: (event) => void (event.type === 'sent' && sentEvents.push(event.id)),
      });
      const result = await r.runOnce();
      await r.close();
      expect(result).toMatchObject({ claimed: 4, sent: 2, retried: 1, failed: 1, lost: 0 });
      expect(sentEvents.sort()).toEqual([ids[0], ids[2]].sort());
      const rows = await t.db.query<{ id: string; status: string }>(
        `SELECT id::text AS id, status FROM outbox_events ORDER BY seq`,
      );
      const kept = onSent === 'keep' ? [ids[0], ids[2]].map((id) => ({ id, status: 'SENT' })) : [];
      const failures = [
        { id: failing, status: 'PENDING' },
        { id: refused, status: 'FAILED' },
      ];
      expect(rows).toEqual(expect.arrayContaining([...failures, ...kept]));
      expect(rows).toHaveLength(kept.length + failures.length);
      expect(await statusOf(t.db, failing)).toMatchObject({ status: 'PENDING', retry_count: 1 });
      expect(publisher.delivered.map((m) => m.id).sort()).toEqual([ids[0], ids[2]].sort());
    },
  );

  it("onSent 'delete' never deletes a row whose lease expired, nor one another relay reclaimed", async () => {
    const [id] = await emitN(1);
    const store = relayStore(t.db);
    const token = randomUUID();
    await store.claim({ token, limit: 1, leaseMs: 60_000, failedHead: 'block' });
    await expireLeases(t.db);
    expect(await store.complete(token, [sent(id!)], 'delete')).toEqual([]);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PROCESSING', claim_token: token });
    expect(await store.recover({ limit: 10, maxClaims: 10 })).toEqual({ requeued: 1, poisoned: [] });
    const fresh = randomUUID();
    await store.claim({ token: fresh, limit: 1, leaseMs: 60_000, failedHead: 'block' });
    // Reclaimed by another relay: the first relay's late completion still deletes nothing.
    expect(await store.complete(token, [sent(id!)], 'delete')).toEqual([]);
    expect(await statusOf(t.db, id!)).toMatchObject({ status: 'PROCESSING', claim_token: fresh });
    expect(await store.complete(fresh, [sent(id!)], 'delete')).toEqual([
      expect.objectContaining({ id, status: 'SENT' }),
    ]);
    expect(await statusOf(t.db, id!)).toEqual({});
  });

  it('a claim skips rows another claim holds and still fills its batch', async () => {
    await emitN(30);
    const other = listened(new Client({ connectionString: t.url }));
    await other.connect();
    try {
      await other.query('BEGIN');
      // Another relay's claim in progress: the 10 oldest due rows locked, not yet updated.
      await other.query(`SELECT id FROM outbox_events ORDER BY next_attempt_at, seq LIMIT 10 FOR UPDATE`);
      const claim = await relayStore(t.db).claim({
        token: randomUUID(),
        limit: 10,
        leaseMs: 60_000,
        failedHead: 'block',
      });
      expect(claim.rows).toHaveLength(10);
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
  });

  it('behind a blocked key the next claim starts with the key scan, and starts cheap again once the window fills', async () => {
    const hot = await emitMany(
      t.db,
      Array.from({ length: 100 }, (_, i) => ({ type: 'hot', payload: { i }, orderingKey: 'hot' })),
    );
    await createOutboxAdmin(t.db).markFailed(hot.ids[0]!, 'blocked head');
    await emitMany(
      t.db,
      Array.from({ length: 30 }, (_, i) => ({ type: 'other', payload: { i }, orderingKey: `k${i}` })),
    );
    const { db: counted, statements } = countingStatements();
    const cheap = (text: string) => text.includes('WHERE false');
    const claim = (keyScanFirst: boolean) =>
      relayStore(counted).claim({
        token: randomUUID(),
        limit: 10,
        leaseMs: 60_000,
        failedHead: 'block',
        keyScanFirst,
      });

    const first = await claim(false);
    expect(first.rows).toHaveLength(10);
    expect(statements.filter(cheap)).toHaveLength(1); // the cheap statement found only blocked rows
    expect(first.keyScanFirst).toBe(true);

    statements.length = 0;
    const second = await claim(true);
    expect(second.rows).toHaveLength(10);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter(cheap)).toEqual([]);
    expect(second.keyScanFirst).toBe(true);

    await t.db.execute(`DELETE FROM outbox_events WHERE ordering_key = 'hot'`);
    await emitN(30);
    const third = await claim(true);
    expect(third.rows).toHaveLength(10);
    expect(third.keyScanFirst).toBe(false);
  });

  it.each(['block', 'skip'] as const)(
    "behind a blocked key one key-scan statement fills the claim from the other keys ('%s')",
    async (failedHead) => {
      await blockedKeyAndOthers(failedHead, 30);
      const { db, statements } = countingStatements();
      const claim = await relayStore(db).claim({
        token: randomUUID(),
        limit: 10,
        leaseMs: 60_000,
        failedHead,
        keyScanFirst: true,
      });
      // Keys in index order: hot, k0, k1, k10, k11, ... k17 (the tenth claimable one).
      const visited = ['k0', 'k1', ...Array.from({ length: 8 }, (_, i) => `k1${i}`)];
      expect(claim.rows.map((r) => r.ordering_key)).toEqual(visited);
      expect(statements).toHaveLength(1);
      // The scan stopped once it had met enough claimable keys: the next claim continues after them.
      expect(claim.laneCursor).toBe('k17');
    },
  );

  it.each(['block', 'skip'] as const)(
    "the key scan wraps round past the last key within one statement ('%s')",
    async (failedHead) => {
      await blockedKeyAndOthers(failedHead, 10); // keys in index order: hot, k0 ... k9
      const { db, statements } = countingStatements();
      const claim = (limit: number) =>
        relayStore(db).claim({
          token: randomUUID(),
          limit,
          leaseMs: 60_000,
          failedHead,
          keyScanFirst: true,
          laneCursor: 'k7',
        });
      const first = await claim(5);
      expect(first.rows.map((r) => r.ordering_key)).toEqual(['k0', 'k1', 'k2', 'k8', 'k9']);
      expect(first.laneCursor).toBe('k2');
      expect(statements).toHaveLength(1);

      // Not enough claimable keys: one statement comes back round to the cursor and the claim stops.
      statements.length = 0;
      const rest = await claim(20);
      expect(rest.rows.map((r) => r.ordering_key)).toEqual(['k3', 'k4', 'k5', 'k6', 'k7']);
      expect(rest.laneCursor).toBeNull();
      expect(statements).toHaveLength(1);
    },
  );

  it.each(['block', 'skip'] as const)(
    "behind a blocked key a keyed head older than a steady unkeyed stream is claimed ('%s')",
    async (failedHead) => {
      // 'hot' fills the due window (2 x limit rows) with blocked rows; k0's event is older than
      // every unkeyed event emitted below, so a claim taking unkeyed rows must not pass it by.
      await blockedKeyAndOthers(failedHead, 1);
      const store = relayStore(t.db);
      let laneCursor: string | null | undefined;
      let keyScanFirst: boolean | undefined;
      const claimedKeys: (string | null)[] = [];
      for (let i = 0; i < 5 && !claimedKeys.includes('k0'); i += 1) {
        await emitN(10);
        const claim = await store.claim({
          token: randomUUID(),
          limit: 10,
          leaseMs: 60_000,
          failedHead,
          laneCursor,
          keyScanFirst,
        });
        ({ laneCursor, keyScanFirst } = claim);
        claimedKeys.push(...claim.rows.map((r) => r.ordering_key));
        await t.db.execute(`DELETE FROM outbox_events WHERE id = ANY($1::uuid[])`, [
          claim.rows.map((r) => r.id),
        ]);
      }
      expect(claimedKeys).toContain('k0');
    },
  );

  it.each(['block', 'skip'] as const)(
    "more than 2 x limit blocked keys: one claim reaches the claimable key sorting last from any cursor ('%s')",
    async (failedHead) => {
      // Keys b00 ... b24, each with a blocked head and a PENDING event behind it; then zz, claimable.
      const admin = createOutboxAdmin(t.db);
      for (let i = 0; i < 25; i += 1) {
        const key = `b${String(i).padStart(2, '0')}`;
        const { ids } = await emitMany(t.db, [
          { type: 'blocked', payload: {}, orderingKey: key },
          { type: 'blocked', payload: {}, orderingKey: key },
        ]);
        if (failedHead === 'block') await admin.markFailed(ids[0]!, 'blocked head');
        else
          await t.db.execute(
            `UPDATE outbox_events SET status = 'PROCESSING', claim_token = gen_random_uuid(), lease_expires_at = now() + interval '1 minute', claimed_at = now() WHERE id = $1::uuid`,
            [ids[0]],
          );
      }
      const [zz] = (await emitMany(t.db, [{ type: 'last', payload: {}, orderingKey: 'zz' }])).ids;
      for (const limit of [1, 4]) {
        for (const laneCursor of [null, 'a', 'b07', 'b24', 'zz', 'zzz']) {
          for (const keyScanFirst of [false, true]) {
            const claim = await relayStore(t.db).claim({
              token: randomUUID(),
              limit,
              leaseMs: 60_000,
              failedHead,
              laneCursor,
              keyScanFirst,
            });
            expect([limit, laneCursor, keyScanFirst, claim.rows.map((r) => r.id)]).toEqual([
              limit,
              laneCursor,
              keyScanFirst,
              [zz],
            ]);
            await t.db.execute(
              `UPDATE outbox_events SET status = 'PENDING', claim_token = NULL, lease_expires_at = NULL WHERE id = $1::uuid`,
              [zz],
            );
          }
        }
      }
    },
  );

  it.each(['block', 'skip'] as const)(
    "a head another claim holds does not take a claimable key's place in the claim ('%s')",
    async (failedHead) => {
      await emitMany(
        t.db,
        ['a', 'b', 'c'].map((orderingKey) => ({ type: 'keyed', payload: {}, orderingKey })),
      );
      const other = listened(new Client({ connectionString: t.url }));
      await other.connect();
      try {
        await other.query('BEGIN');
        // Another relay's claim in progress: key a's head locked, not yet updated.
        await other.query(`SELECT id FROM outbox_events WHERE ordering_key = 'a' FOR UPDATE`);
        const claim = await relayStore(t.db).claim({
          token: randomUUID(),
          limit: 2,
          leaseMs: 60_000,
          failedHead,
        });
        expect(claim.rows.map((r) => r.ordering_key)).toEqual(['b', 'c']);
      } finally {
        await other.query('ROLLBACK');
        await other.end();
      }
    },
  );
});
