/**
 * pgTransactions(pool).connections is the pool's size as node-postgres uses it: a `max` read from
 * an environment variable is a string ("2"), which pg-pool compares as the number it holds, so a
 * pool of two went unwarned (the worker's pool-size warning read numbers only).
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions } from '@ferry/core';

const pools: Pool[] = [];
afterAll(async () => {
  for (const pool of pools) await pool.end();
});

function pool(max: unknown): Pool {
  const created = listened(
    new Pool({ connectionString: 'postgresql://127.0.0.1:1/none', max: max as number }),
  );
  pools.push(created);
  return created;
}

describe('pgTransactions(pool).connections', () => {
  it.each([
    [2, 2],
    ['2', 2],
    [' 3 ', 3],
    [undefined, 10],
  ])('reads max %p as %p connections', (max, connections) => {
    expect(pgTransactions(pool(max)).connections).toBe(connections);
  });

  it.each([['two'], ['2.5'], ['0'], ['-1'], [2.5]])('leaves max %p unread (no size to warn by)', (max) => {
    expect(pgTransactions(pool(max)).connections).toBeUndefined();
  });
});
