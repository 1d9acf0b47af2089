import type { Pool, PoolClient } from 'pg';
import { releaseDestroyed } from './endConnection';

/** Per pool, the callers of connectUnlessEnded still waiting: one listener per pool, not per wait. */
const waiting = new WeakMap<Pool, Set<() => void>>();

/**
 * `pool.connect()`, except that a wait the pool will never answer fails: node-postgres gives no
 * connection to a caller still waiting when the application ends the pool (`pool.end()`, every
 * connection busy), it ends each connection as it comes back and leaves the caller waiting for
 * ever. As soon as a connection comes back to an ending pool (pg's `release` and `remove` events)
 * the wait fails with `ended()` (FERRY_CLOSED naming the argument that carried the pool), not at
 * the caller's deadline with a retriable "no connection" (endedPoolWaiters.test.ts). A connection
 * handed over after that is released at once.
 */
export function connectUnlessEnded(pool: Pool, ended: () => Error): Promise<PoolClient> {
  return new Promise<PoolClient>((resolve, reject) => {
    let settled = false;
    // Ended already: pg refuses the call itself ("Cannot use a pool after calling end on the pool").
    const stop = pool.ending
      ? () => undefined
      : watchEnding(pool, () => {
          if (settled) return;
          settled = true;
          stop();
          reject(ended());
        });
    pool.connect((error, client) => {
      if (error || client === undefined) {
        if (settled) return;
        settled = true;
        stop();
        reject(error ?? new Error('node-postgres gave no connection'));
        return;
      }
      // Called as the pool hands the connection over, which takes pg-pool's own `error` listener
      // off it, possibly in the middle of reading the server's answer: a FATAL read in the same
      // chunk as the connection's first ReadyForQuery (pg_terminate_backend, a failover) is parsed
      // before the caller's wait resumes a promise turn later and listens itself. Held here until
      // then, not an unhandled `error` that ends the process (review 101): the connection is
      // destroyed and the wait fails with it.
      let early: Error | undefined;
      const onEarly = (lost: Error): void => {
        early ??= lost;
      };
      client.on('error', onEarly);
      queueMicrotask(() => {
        client.removeListener('error', onEarly);
        if (early !== undefined) releaseDestroyed(client, early);
        else if (settled) client.release();
        if (settled) return;
        settled = true;
        stop();
        if (early !== undefined) reject(early);
        else resolve(client);
      });
    });
  });
}

/** Calls `onEnded` when a connection comes back to `pool` once it is ending; returns the unwatch. */
function watchEnding(pool: Pool, onEnded: () => void): () => void {
  let callers = waiting.get(pool);
  if (callers === undefined) {
    const all = new Set<() => void>();
    callers = all;
    waiting.set(pool, all);
    const check = (): void => {
      if (pool.ending) for (const caller of [...all]) caller();
    };
    pool.on('release', check);
    pool.on('remove', check);
  }
  const set = callers;
  set.add(onEnded);
  return () => void set.delete(onEnded);
}
