import { Pool } from 'pg';
import { listened } from '../../test-support/oneStatement';
import { createRelay, fromPg, type Relay } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { BATCH_SIZE } from './env';

/** Messages from one relay process to the bench (parent). */
export type ChildMessage =
  | { kind: 'ready' }
  | { kind: 'warmed' }
  | { kind: 'done'; sent: number; cpuMs: number; claims: number; emptyClaims: number }
  | { kind: 'error'; error: string };

/** Messages from the bench (parent) to one relay process. */
export type ParentMessage = 'warm' | 'go' | 'stop';

/** Resolves on the parent's next `kind`. */
function parentSays(kind: ParentMessage): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (message !== kind) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}

/**
 * One relay process of `relay-processes-xN` (started by bench/run.js when BENCH_CHILD=relay): a
 * relay on its own node-postgres pool of 4 (fromPg) with the in-memory publisher.
 *
 * 1. It says `ready` once connected.
 * 2. Warm-up: on `warm` it runs a relay until `stop` (the parent emitted a warm-up backlog and
 *    saw it drained), closes it and says `warmed`. A relay process runs for hours; without this
 *    the scenario would time V8 compiling the relay's code once per process, so 8 processes
 *    would pay it 8 times for a backlog one process drains in a fraction of a second.
 * 3. On `go` it starts a new relay, and on `stop` (the parent saw the measured backlog drained)
 *    closes it and reports how many events it sent and the CPU it used since `go`.
 *
 * The children never poll the table themselves: one watcher (the parent) for 1 or 8 relays, so
 * the watching costs both sides the same.
 */
export async function runRelayChild(): Promise<void> {
  const send = (message: ChildMessage) => process.send?.(message);
  // The bench is gone (killed, or ended without a `stop`): nothing will stop this relay, so end.
  process.once('disconnect', () => process.exit(1));
  const pool = listened(new Pool({ connectionString: process.env.BENCH_CHILD_DB, max: 4 }));
  let sent = 0;
  let claims = 0;
  let emptyClaims = 0;
  const relay = (): Relay =>
    createRelay({
      db: fromPg(pool),
      publisher: new InMemoryPublisher(),
      options: { batchSize: BATCH_SIZE },
      observer: (event) => {
        if (event.type === 'sent') sent += 1;
        else if (event.type === 'cycle') {
          if (event.claimed > 0) claims += 1;
          else emptyClaims += 1;
        }
      },
    });
  try {
    await pool.query('SELECT 1');
    const warm = parentSays('warm');
    send({ kind: 'ready' });
    await warm;
    const warmStop = parentSays('stop');
    const warming = relay();
    warming.start();
    await warmStop;
    await warming.close();
    const go = parentSays('go');
    send({ kind: 'warmed' });
    await go;
    sent = 0;
    claims = 0;
    emptyClaims = 0;
    const stop = parentSays('stop');
    const cpu = process.cpuUsage();
    const measured = relay();
    measured.start();
    await stop;
    await measured.close();
    const used = process.cpuUsage(cpu);
    send({ kind: 'done', sent, cpuMs: (used.user + used.system) / 1000, claims, emptyClaims });
  } catch (error) {
    send({ kind: 'error', error: error instanceof Error ? error.message : String(error) });
  } finally {
    await pool.end();
  }
}
