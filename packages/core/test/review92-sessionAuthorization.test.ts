/**
 * Review 92 (failed first): the completion puts back a handler's session defaults (review 90,
 * sessionDefaults.ts), but not `session_authorization`, and it puts back `role` with the identity
 * the handler left.
 *
 * User: a superuser connection (a development or test setup, or a migration job) on one pool for
 * the handlers and ferry's own statements, its role set for the session (`SET ROLE app`). A
 * handler runs `SET SESSION AUTHORIZATION` to act as another user, where it meant it for its own
 * transaction only, and does its work correctly.
 *
 * What happened: the completion's restore of `role` ran as the handler's session user, who may
 * not SET that role: 42501 "permission denied to set role", so the completion failed and the
 * handler's correct work was rolled back and retried for ever. Without a session role, the
 * completion succeeded and left the handler's session user on the connection: every later
 * statement on it, ferry's and the application's, ran as that user.
 * Now: `session_authorization` is put back too, before `role`.
 */
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { pgTransactions } from '@ferry/core';
import { adminQuery, createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow } from './inbox/helpers';

describe('review92: a handler that runs SET SESSION AUTHORIZATION', () => {
  const suffix = `${process.pid}_${Date.now()}`;
  const app = `rv92_app_${suffix}`;
  const other = `rv92_other_${suffix}`;
  let t: TestDatabase;
  let pool: Pool;
  beforeAll(async () => {
    t = await createTestDatabase();
    pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    // `other` may use ferry's tables (so the handler's own identity is not what fails) but is not
    // a member of `app`.
    await adminQuery(`CREATE ROLE ${app}`);
    await adminQuery(`CREATE ROLE ${other}`);
    await pool.query(
      `GRANT USAGE ON SCHEMA public TO ${app}, ${other};
       GRANT ALL ON ALL TABLES IN SCHEMA public TO ${app}, ${other};
       GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${app}, ${other}`,
    );
  });
  afterAll(async () => {
    await pool.end();
    await t.drop();
    await adminQuery(`DROP ROLE IF EXISTS ${app}`);
    await adminQuery(`DROP ROLE IF EXISTS ${other}`);
  });

  it("completes, and leaves the connection's session user and role as they were", async () => {
    const { rows: before } = await pool.query<{ session_user: string }>('SELECT session_user');
    await pool.query(`SET ROLE ${app}`); // the one connection's session role
    const inbox = makeInbox(pgTransactions(pool), {
      handlers: {
        impersonate: async (_payload, { tx }) => {
          await tx.query(`SET SESSION AUTHORIZATION ${other}`);
        },
      },
      worker: { concurrency: 1, prefetch: 0, maxAttempts: 3 },
    });
    const accepted = await inbox.accept(message({ consumer: 'impersonate' }));
    expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(await receiptRow(t, accepted.record.id)).toMatchObject({ status: 'COMPLETED' });
    const { rows } = await pool.query<{ session_user: string; role: string }>(
      `SELECT session_user, current_setting('role') AS role`,
    );
    expect(rows[0]).toEqual({ session_user: before[0]?.session_user, role: app });
  });
});
