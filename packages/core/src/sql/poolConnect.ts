import type { Pool, PoolClient } from 'pg';

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
  const connecting = pool.connect();
  // Ended already: pg refuses the call itself ("Cannot use a pool after calling end on the pool").
  if (pool.ending) return connecting;
  return new Promise<PoolClient>((resolve, reject) => {
    let settled = false;
    const stop = watchEnding(pool, () => {
      if (settled) return;
      settled = true;
      stop();
      reject(ended());
    });
    connecting.then(
      (client) => {
        if (settled) return client.release();
        settled = true;
        stop();
        resolve(client);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        stop();
        reject(error);
      },
    );
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
