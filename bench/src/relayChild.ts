import { Pool } from 'pg';
import { createRelay, fromPg } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { BATCH_SIZE } from './env';

/** Messages between the bench (parent) and one relay process. */
export type ChildMessage =
  { kind: 'ready' } | { kind: 'done'; sent: number } | { kind: 'error'; error: string };

const OPEN = `SELECT count(*)::int AS n FROM outbox_events WHERE status IN ('PENDING', 'PROCESSING')`;

/**
 * One relay process of `relay-processes-xN` (started by bench/run.js when BENCH_CHILD=relay):
 * a relay on its own node-postgres pool of 4 (fromPg) with the in-memory publisher. It says
 * `ready` once connected, starts on the parent's `go`, and reports how many events it sent
 * once no row is PENDING or PROCESSING (checked every 50 ms).
 */
export async function runRelayChild(): Promise<void> {
  const send = (message: ChildMessage) => process.send?.(message);
  const pool = new Pool({ connectionString: process.env.BENCH_CHILD_DB, max: 4 });
  try {
    let sent = 0;
    const relay = createRelay({
      db: fromPg(pool),
      publisher: new InMemoryPublisher(),
      options: { batchSize: BATCH_SIZE },
      observer: (event) => void (event.type === 'sent' && (sent += 1)),
    });
    await pool.query('SELECT 1');
    const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
    send({ kind: 'ready' });
    await go;
    relay.start();
    const end = Date.now() + 600_000;
    while ((await pool.query<{ n: number }>(OPEN)).rows[0]?.n !== 0) {
      if (Date.now() > end) throw new Error('backlog not drained before the deadline');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await relay.close();
    send({ kind: 'done', sent });
  } catch (error) {
    send({ kind: 'error', error: error instanceof Error ? error.message : String(error) });
  } finally {
    await pool.end();
  }
}
