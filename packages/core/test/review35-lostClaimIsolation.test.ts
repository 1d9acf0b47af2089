/**
 * Review 35: on a database whose default_transaction_isolation is REPEATABLE READ (or
 * SERIALIZABLE; a configuration ferry supports since review 29, withSerializationRetry), an outbox
 * admin transition that loses a race is answered `conflict`, never `lost_claim`.
 *
 * The audited transaction starts at the database's default; its UPDATE, waiting on the row a
 * concurrent transition holds, fails 40001 once that commits; withSerializationRetry runs the whole
 * action again at READ COMMITTED, whose fresh snapshot sees the row already moved on: `conflict`
 * ("the status does not allow it"). At READ COMMITTED the same interleaving is `lost_claim`
 * (test/outbox/admin.test.ts 'reports lost_claim when a concurrent transition wins').
 *
 * Contract: spec 000 Manual Reprocessing: `conflict` "state does not allow retry", `lost_claim`
 * "concurrent transition won"; docs/outbox.md: "`lost_claim` (the row was in the source status when
 * the statement started but a concurrent transition won)": here the row was FAILED when the
 * statement started and a concurrent transition won. The answer (and the audit row's per-id
 * result) depends on a server setting the operator does not see.
 *
 * Severity: low (nothing is applied wrongly; the outcome class is wrong). Fix direction: remember
 * that the first run saw the source status when it is re-run after 40001 (or start the admin's
 * transactions at READ COMMITTED, as the relay's statements are after a refusal).
 */
import { Client, Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createOutboxAdmin, fromPg } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

beforeAll(async () => {
  const t = database.t();
  await t.db.execute(`ALTER DATABASE ${t.name} SET default_transaction_isolation = 'repeatable read'`);
});

async function lockWaiters(): Promise<number> {
  const [row] = await database
    .t()
    .db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    );
  return row?.n ?? 0;
}

it.each([
  ['retry', 'FAILED', `status = 'PENDING', failed_at = NULL`],
  ['markFailed', 'PENDING', `status = 'FAILED', failed_at = now(), last_error = 'another operator'`],
] as const)(
  '%s losing to a concurrent transition is lost_claim at REPEATABLE READ too',
  async (action, from, set) => {
    const f = await database.fixture();
    const t = database.t();
    const id = from === 'FAILED' ? f.failed : f.pending;
    // A fresh pool after the ALTER DATABASE: its sessions start at REPEATABLE READ.
    const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const { rows } = await pool.query<{ transaction_isolation: string }>('SHOW transaction_isolation');
    expect(rows[0]?.transaction_isolation).toBe('repeatable read');
    const other = listened(new Client({ connectionString: t.url }));
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE outbox_events SET ${set} WHERE id = $1::uuid`, [id]);
      const admin = createOutboxAdmin(fromPg(pool));
      const pending = action === 'retry' ? admin.retry(id) : admin.markFailed(id, 'operator said so');
      for (let i = 0; i < 500 && (await lockWaiters()) === 0; i += 1)
        await new Promise((r) => setTimeout(r, 20));
      expect(await lockWaiters()).toBeGreaterThan(0);
      await other.query('COMMIT');
      // On HEAD: { outcome: 'conflict' } (re-run at READ COMMITTED after 40001).
      expect(await pending).toEqual({ id, outcome: 'lost_claim' });
    } finally {
      await other.end();
      await pool.end();
    }
  },
);
