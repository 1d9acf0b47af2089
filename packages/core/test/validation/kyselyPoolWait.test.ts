/**
 * A statement on a Kysely instance whose pool has no free connection (review 65): the deadline
 * passing while it waits is FERRY_DATABASE_UNAVAILABLE, and the connection that frees up later is
 * handed back without the statement: the caller was told it failed, so it must not run after all.
 * One that has its connection and gets no answer is FERRY_TIMEOUT "did not answer a statement".
 */
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromKysely } from '@ferry/core/kysely';
import { withStatementDeadline } from '../../src/sql/statementDeadline';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

jest.setTimeout(30_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await t.db.execute('CREATE TABLE late_marker (n int)');
});
afterAll(async () => {
  await t.drop();
});

describe('fromKysely under a statement deadline', () => {
  it('no pooled connection in time: FERRY_DATABASE_UNAVAILABLE, and the statement is never sent once one frees up', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    const held = await pool.connect();
    try {
      const error = await withStatementDeadline(fromKysely(kysely), 200)
        .execute('INSERT INTO late_marker VALUES (1)')
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true });
    } finally {
      held.release();
    }
    // One connection, waiters served in order: a late INSERT would run before this count.
    const [row] = await fromKysely(kysely).query<{ n: number }>('SELECT count(*)::int AS n FROM late_marker');
    await kysely.destroy();
    expect(row?.n).toBe(0);
  });

  it('a statement sent and unanswered: FERRY_TIMEOUT, the database did not answer a statement', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    const lockPool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const locker = await lockPool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE late_marker IN ACCESS EXCLUSIVE MODE');
      const error = await withStatementDeadline(fromKysely(kysely), 200)
        .query('SELECT * FROM late_marker')
        .catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: 'FERRY_TIMEOUT',
        message: expect.stringContaining('did not answer a statement'),
      });
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
      await lockPool.end();
    }
    await kysely.destroy();
  });
});
