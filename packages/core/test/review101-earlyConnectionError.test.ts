/**
 * Review 101 (found by review96-killedCompletion failing under load): a connection PostgreSQL ends
 * right as the pool hands it out. pg-pool takes its own `error` listener off a connection when it
 * hands it over, and ferry put its own on when its wait for the connection resumed, a promise turn
 * later. PostgreSQL's FATAL (57P01 "terminating connection due to administrator command": a
 * pg_terminate_backend, a failover, a restart) arriving in the same read as the connection's first
 * ReadyForQuery is parsed in between: the connection emitted `error` with no listener, an
 * unhandled error that ends the process. Here the FATAL is emitted on the next tick after the
 * handover (before any promise turn), as the parser's next message would be. What should happen:
 * the statement or transaction fails (a typed, retriable error), the connection is not reused,
 * and the pool goes on serving.
 */
import { Pool, type PoolClient } from 'pg';
import { fromPg, isFerryError, pgTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A pool whose next `count` handovers are followed, before any promise turn, by the connection's end. */
function terminatingPool(count: number): Pool {
  const pool = new Pool({ connectionString: t.url, max: 2 });
  pool.on('error', () => undefined);
  let left = count;
  pool.on('acquire', (client: PoolClient) => {
    if (left <= 0) return;
    left -= 1;
    process.nextTick(() => {
      const fatal = Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
        severity: 'FATAL',
      });
      // What pg does for a FATAL with no statement running: the connection is no longer queryable.
      (client as unknown as { _queryable: boolean })._queryable = false;
      client.emit('error', fatal);
    });
  });
  return pool;
}

describe('review101: a connection ended as the pool hands it to ferry', () => {
  it('fails the statement, not the process, and the pool goes on serving', async () => {
    const pool = terminatingPool(1);
    try {
      const db = fromPg(pool);
      const error = await db.query('SELECT 1 AS n').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(isFerryError(error) ? error.retriable : true).toBe(true);
      expect(await db.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it('fails the transaction, not the process, and the pool goes on serving', async () => {
    const pool = terminatingPool(1);
    try {
      const { db, transaction } = pgTransactions(pool);
      const error = await transaction(async (client) => (await client.query('SELECT 1 AS n')).rows).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect(await db.transaction(async (tx) => tx.query<{ n: number }>('SELECT 2 AS n'))).toEqual([
        { n: 2 },
      ]);
    } finally {
      await pool.end();
    }
  });
});
