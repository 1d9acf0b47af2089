/**
 * Review 145 (lead from earlier reviews): endablePool, the one pool ferry makes and ends itself
 * (the CLI's, the lost-COMMIT question's, the testing package's), attached no 'error' listener:
 * every caller had to add one, and a caller that forgot crashed the process as soon as an idle
 * connection's server went away (a database restart, pg_terminate_backend): pg-pool re-emits an
 * idle client's error on the pool, and an 'error' event nobody listens to is thrown. Fails on main:
 * the uncaught "terminating connection due to administrator command".
 */
import { endablePool } from '@ferry/core/transport';
import { adminQuery, createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { waitFor } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
});
afterAll(async () => {
  await t.drop();
});

it('an idle connection whose backend is ended is dropped from the pool; the pool answers again', async () => {
  const { pool, end } = endablePool({
    connectionString: t.url,
    max: 1,
    application_name: 'ferry_review145_idle',
  });
  try {
    const client = await pool.connect();
    client.release();
    expect(pool.idleCount).toBe(1);
    await adminQuery(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ferry_review145_idle'`,
    );
    // pg-pool removes the idle client once its error arrives.
    await waitFor(() => pool.totalCount === 0, 10_000);
    const { rows } = await pool.query<{ answer: number }>('SELECT 1 AS answer');
    expect(rows).toEqual([{ answer: 1 }]);
  } finally {
    await end();
  }
});
