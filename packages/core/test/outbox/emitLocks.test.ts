import { emitMany } from '@ferry/core';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const events = (keys: readonly string[]) =>
  keys.map((orderingKey) => ({ type: 'k', payload: {}, orderingKey }));

/** The lock bucket of ordering key `k` (insertEvents.ts: 32 buckets). */
const BUCKET = (k: string) => `abs(hashtext(${k}) % 32)`;

/** Waits until some backend waits on an advisory lock (an emit blocked behind another transaction). */
async function someoneWaitsOnAnAdvisoryLock(): Promise<void> {
  await waitFor(async () => {
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return (row?.n ?? 0) > 0;
  });
}

describe('per-key advisory locks in emit', () => {
  it('two transactions emitting the same keys in opposite order both commit (locks taken in one global order)', async () => {
    // lo is the key whose lock bucket sorts first, so A's call order agrees with the global order.
    const buckets = await t.db.query<{ k: string; bucket: number }>(
      `SELECT k, ${BUCKET('k')} AS bucket FROM unnest(ARRAY['key-a', 'key-b']) AS k ORDER BY 2`,
    );
    expect(new Set(buckets.map((b) => b.bucket)).size).toBe(2);
    const [lo, hi] = buckets.map((r) => r.k) as [string, string];
    let releaseA!: () => void;
    const aMayGoOn = new Promise<void>((resolve) => (releaseA = resolve));
    const a = t.prisma.$transaction(
      async (tx) => {
        await emitMany(tx, events([lo]));
        await aMayGoOn;
        await emitMany(tx, events([hi]));
      },
      { timeout: 20_000 },
    );
    // A holds lo; B asks for hi and lo in that order, and must wait for lo holding nothing.
    await waitFor(async () => {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      return (row?.n ?? 0) > 0;
    });
    const b = t.prisma.$transaction(async (tx) => emitMany(tx, events([hi, lo])), { timeout: 20_000 });
    await someoneWaitsOnAnAdvisoryLock();
    releaseA();
    await expect(Promise.all([a, b])).resolves.toBeDefined();
    const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_events`);
    expect(row?.n).toBe(4);
  });

  it('many concurrent emitMany calls over shuffled and reversed key sets never deadlock', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `shared-${i}`);
    const rounds = Array.from({ length: 10 }, (_, round) =>
      Promise.all([
        emitMany(t.prisma, events(round % 2 === 0 ? keys : [...keys].reverse())),
        emitMany(t.prisma, events(round % 2 === 0 ? [...keys].reverse() : keys)),
      ]),
    );
    await expect(Promise.all(rounds)).resolves.toHaveLength(10);
  });

  it('a transaction emitting 3,000 keys (one call, then 100 calls of 10) holds at most 32 advisory locks', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const client = await pool.connect();
    const keys = (from: number, n: number) => Array.from({ length: n }, (_, i) => `order-${from + i}`);
    const held = async () =>
      (
        await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'`,
        )
      ).rows[0]?.n;
    try {
      await client.query('BEGIN');
      await emitMany(client, events(keys(0, 2_000)));
      const afterOneCall = await held();
      for (let call = 0; call < 100; call += 1) await emitMany(client, events(keys(2_000 + call * 10, 10)));
      expect({ afterOneCall, afterAll: await held() }).toEqual({ afterOneCall: 32, afterAll: 32 });
      await client.query('ROLLBACK');
    } finally {
      client.release();
      await pool.end();
    }
  });

  it('an emitter of a key still waits for the transaction that emitted it to end', async () => {
    let releaseA!: () => void;
    const aMayCommit = new Promise<void>((resolve) => (releaseA = resolve));
    const a = t.prisma.$transaction(
      async (tx) => {
        await emitMany(tx, events(['the-key']));
        await aMayCommit;
      },
      { timeout: 20_000 },
    );
    await waitFor(async () => {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM outbox_events WHERE ordering_key = 'the-key'`,
      );
      const [lock] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      return row?.n === 0 && (lock?.n ?? 0) > 0;
    });
    let bDone = false;
    const b = emitMany(t.prisma, events(['the-key'])).then(() => (bDone = true));
    await someoneWaitsOnAnAdvisoryLock();
    expect(bDone).toBe(false);
    releaseA();
    await Promise.all([a, b]);
    const rows = await t.db.query<{ seq: string }>(
      `SELECT seq::text AS seq FROM outbox_events WHERE ordering_key = 'the-key' ORDER BY seq`,
    );
    expect(rows).toHaveLength(2);
  });
});
