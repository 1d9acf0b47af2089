/**
 * Review 87 (outbox emit: ordering-key lock buckets), failing on main.
 *
 * What I did: two application transactions, each emitting two keyed events one `emit` call at a
 * time, as a request handler does (an order's event, then its customer's). No key is shared
 * between the transactions: `order-…` keys in one, other `order-…` keys in the other. The keys are
 * chosen so that their lock buckets (review 82: hashtext(key) % 32) come in opposite orders in the
 * two transactions, which among keys one per order is a matter of chance, not of the application.
 *
 * What happened: each transaction waits for the bucket the other holds: PostgreSQL detects a
 * deadlock and aborts one of them (40P01, FERRY_DATABASE_UNAVAILABLE). Emitters of different keys
 * never waited for each other before the buckets; the docs now tell the application to emit "such
 * keys" in one emitMany call, keys whose buckets it cannot see.
 *
 * What should happen: per-key ordering needs emitters of the SAME key to wait; emitters of
 * different keys need not, so two transactions that share no key must both commit, whatever the
 * order of their calls, and an emitter of a key must still wait for any transaction (small or
 * bulk) that emitted it, so that seq order stays commit order. (The last three cases pass on main:
 * they guard the fix, whose key and bucket locks must still make emitters of one key wait, and
 * whose waiting emitter must hold no bucket a bulk transaction needs.)
 */
import { emit, emitMany, type OutboxEventInput } from '@ferry/core';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { waitFor } from './outbox/helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 4 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

const keyed = (orderingKey: string): OutboxEventInput => ({ type: 'order.placed', payload: {}, orderingKey });

/** `order-<n>` keys and their lock buckets (insertEvents.ts), for n below 200. */
async function bucketsOfKeys(): Promise<Map<number, string[]>> {
  const rows = await t.db.query<{ k: string; bucket: number }>(
    `SELECT k, abs(hashtext(k) % 32) AS bucket FROM (SELECT 'order-' || n AS k FROM generate_series(0, 199) n) s`,
  );
  const byBucket = new Map<number, string[]>();
  for (const { k, bucket } of rows) byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), k]);
  return byBucket;
}

async function inTransaction(): Promise<PoolClient> {
  const client = await pool.connect();
  await client.query('BEGIN');
  return client;
}

/** Whether some backend of this database waits on an advisory lock. */
async function someoneWaits(): Promise<boolean> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return (row?.n ?? 0) > 0;
}

describe('review87: emitters of different ordering keys', () => {
  it('two transactions sharing no key, emitting one call at a time in opposite bucket orders, both commit', async () => {
    const byBucket = await bucketsOfKeys();
    const [x, y] = [...byBucket.values()].filter((keys) => keys.length >= 2) as [string[], string[]];
    // T1: x[0] then y[0]; T2: y[1] then x[1]: four different keys, buckets X, Y then Y, X.
    const t1 = await inTransaction();
    const t2 = await inTransaction();
    const outcome = async (client: PoolClient, key: string) =>
      emit(client, keyed(key)).then(
        () => 'emitted',
        (e: unknown) => `refused: ${(e as Error).message}`,
      );
    try {
      expect(await outcome(t1, x[0]!)).toBe('emitted');
      expect(await outcome(t2, y[1]!)).toBe('emitted');
      // On main: one waits for the other's bucket, then PostgreSQL aborts one (deadlock detected).
      const second = await Promise.all([outcome(t1, y[0]!), outcome(t2, x[1]!)]);
      expect(second).toEqual(['emitted', 'emitted']);
      await t1.query('COMMIT');
      await t2.query('COMMIT');
    } finally {
      await t1.query('ROLLBACK').catch(() => undefined);
      await t2.query('ROLLBACK').catch(() => undefined);
      t1.release();
      t2.release();
    }
    const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events`);
    expect(row?.n).toBe(4);
  });

  it('a transaction going past 8 keys while another waits for one of its keys: both commit', async () => {
    // T1 emits `shared` (its own lock), T2 waits for it; T1 then emits 20 more keys in one call
    // (past 8: buckets, exclusively, `shared`'s among them). T2 waiting must hold no bucket.
    const byBucket = await bucketsOfKeys();
    const [sameBucket] = [...byBucket.values()].filter((keys) => keys.length >= 2) as [string[]];
    const shared = sameBucket[0]!;
    const more = [sameBucket[1]!, ...Array.from({ length: 19 }, (_, i) => `more-${i}`)];
    const t1 = await inTransaction();
    const t2 = await inTransaction();
    try {
      await emit(t1, keyed(shared));
      const waiting = emit(t2, keyed(shared)).then(
        () => 'emitted',
        (e: unknown) => `refused: ${(e as Error).message}`,
      );
      await waitFor(someoneWaits);
      const bulk = await emitMany(
        t1,
        more.map((k) => keyed(k)),
      ).then(
        () => 'emitted',
        (e: unknown) => `refused: ${(e as Error).message}`,
      );
      expect(bulk).toBe('emitted');
      await t1.query('COMMIT');
      expect(await waiting).toBe('emitted');
      await t2.query('COMMIT');
    } finally {
      await t1.query('ROLLBACK').catch(() => undefined);
      await t2.query('ROLLBACK').catch(() => undefined);
      t1.release();
      t2.release();
    }
    const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events`);
    expect(row?.n).toBe(22);
  });

  it.each([
    ['a transaction emitting few keys', 'a bulk emitMany'],
    ['a bulk emitMany', 'a transaction emitting few keys'],
  ])(
    'an emitter of a key waits for %s that emitted it (%s after it): seq order is commit order',
    async (first) => {
      const bulk = Array.from({ length: 100 }, (_, i) => keyed(`bulk-${i}`));
      const shared = 'bulk-7';
      const holder = await inTransaction();
      let secondDone = false;
      let second: Promise<unknown> | undefined;
      try {
        if (first === 'a bulk emitMany') await emitMany(holder, bulk);
        else await emit(holder, keyed(shared));
        const events = first === 'a bulk emitMany' ? [keyed(shared)] : bulk;
        second = emitMany(t.db, events).then(() => (secondDone = true));
        await waitFor(someoneWaits);
        expect(secondDone).toBe(false);
        await holder.query('COMMIT');
        await second;
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
      }
      // The holder's event of the shared key was numbered and committed first.
      const rows = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM outbox_events WHERE ordering_key = $1`,
        [shared],
      );
      expect(rows[0]?.n).toBe(2);
    },
  );
});
