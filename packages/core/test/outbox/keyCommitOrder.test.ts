/**
 * seq order is commit order per ordering key (insertEvents.ts, LOCK_KEYS), under concurrent
 * transactions of both lock modes: few keys (each key's own lock) and past 8 keys (the keys'
 * buckets), emitting shared keys one call at a time and in bulk. A watcher reads each key's events
 * over and over: once an event of a key is visible, no event of that key numbered below it may
 * appear later (it would be published after it). A transaction PostgreSQL aborts as a deadlock
 * (possible past 8 keys in separate calls, docs/outbox.md) leaves nothing visible and is counted.
 */
import { emitMany, isFerryError, type OutboxEventInput } from '@ferry/core';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  // A deadlock (between transactions past 8 keys and others) is detected after deadlock_timeout.
  pool = listened(new Pool({ connectionString: t.url, max: 8, options: '-c deadlock_timeout=50' }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

const SHARED = ['k0', 'k1', 'k2'];
const keyed = (orderingKey: string): OutboxEventInput => ({ type: 't', payload: {}, orderingKey });

/** One transaction: `calls` emitMany calls in order, then COMMIT; false when it was rolled back. */
async function transaction(calls: readonly string[][]): Promise<boolean> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const keys of calls) await emitMany(client, keys.map(keyed));
    await client.query('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK');
    if (!isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE')) throw error;
    return false;
  } finally {
    client.release();
  }
}

it('no event of a key becomes visible below one of that key already visible', async () => {
  let stop = false;
  const violations: string[] = [];
  const watcher = (async () => {
    const highest = new Map<string, number>();
    const countUpTo = new Map<string, number>();
    while (!stop) {
      const { rows } = await pool.query<{ k: string; seqs: string[] }>(
        `SELECT ordering_key AS k, array_agg(seq::text ORDER BY seq) AS seqs FROM outbox_events
         WHERE ordering_key = ANY ($1) GROUP BY 1`,
        [SHARED],
      );
      for (const { k, seqs } of rows) {
        const numbers = seqs.map(Number);
        const seen = highest.get(k) ?? 0;
        const below = numbers.filter((n) => n <= seen).length;
        if (below !== (countUpTo.get(k) ?? 0)) violations.push(`${k}: an event appeared below seq ${seen}`);
        highest.set(k, Math.max(...numbers));
        countUpTo.set(k, numbers.length);
      }
    }
  })();
  let committed = 0;
  const worker = async (w: number) => {
    for (let i = 0; i < 25; i += 1) {
      const shared = SHARED[(w + i) % SHARED.length]!;
      const calls =
        (w + i) % 4 === 0
          ? [[shared], [...SHARED, ...Array.from({ length: 12 }, (_, j) => `bulk-${w}-${i}-${j}`)]]
          : [[shared], [`solo-${w}-${i}`]];
      if (await transaction(calls)) committed += 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: 6 }, (_, w) => worker(w)));
  } finally {
    stop = true;
    await watcher;
  }
  expect(violations).toEqual([]);
  expect(committed).toBeGreaterThan(0);
});
