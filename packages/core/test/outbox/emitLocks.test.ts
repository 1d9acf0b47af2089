import { emitMany } from '@ferry/core';
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
    // lo is the key whose lock id sorts first, so A's call order agrees with the global order.
    const [lo, hi] = (
      await t.db.query<{ k: string }>(
        `SELECT k FROM unnest(ARRAY['key-a', 'key-b']) AS k ORDER BY hashtextextended('ferry_outbox:' || k, 0)`,
      )
    ).map((r) => r.k) as [string, string];
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
});
