import { Pool } from 'pg';
import { createRelay, fromPg } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { BATCH_SIZE } from './env';

/** Messages between the bench (parent) and one relay process. */
export type ChildMessage =
  { kind: 'ready' } | { kind: 'done'; sent: number; cpuMs: number } | { kind: 'error'; error: string };

/**
 * One relay process of `relay-processes-xN` (started by bench/run.js when BENCH_CHILD=relay):
 * a relay on its own node-postgres pool of 4 (fromPg) with the in-memory publisher. It says
 * `ready` once connected, starts on the parent's `go`, and on the parent's `stop` (sent once
 * the parent saw the backlog drained) closes the relay and reports how many events it sent.
 * The children never poll the table themselves: one watcher (the parent) for 1 or 8 relays, so
 * the watching costs both sides the same.
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
    const next = () => new Promise<void>((resolve) => process.once('message', () => resolve()));
    const go = next();
    send({ kind: 'ready' });
    await go;
    const stop = next();
    const cpu = process.cpuUsage();
    relay.start();
    await stop;
    await relay.close();
    const used = process.cpuUsage(cpu);
    send({ kind: 'done', sent, cpuMs: (used.user + used.system) / 1000 });
  } catch (error) {
    send({ kind: 'error', error: error instanceof Error ? error.message : String(error) });
  } finally {
    await pool.end();
  }
}
