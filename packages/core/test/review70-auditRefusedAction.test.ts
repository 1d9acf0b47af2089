/**
 * Review 70: an admin mutation that PostgreSQL refuses for a lock wait (55P03, `lock_timeout`) or a
 * missing privilege (42501) leaves no row in the operator audit trail, although the admin owns the
 * transaction and the database is there to take the row.
 *
 * audited() writes the `error` row after a failed action unless the failure is "unreachable"
 * (audit/audited.ts isUnreachable): FERRY_SCHEMA_NOT_READY, FERRY_OUTCOME_UNKNOWN and every
 * FERRY_DATABASE_UNAVAILABLE. But the translation table (sql/dbErrors.ts) puts far more than a lost
 * connection under FERRY_DATABASE_UNAVAILABLE: lock timeouts, deadlocks, serialization failures,
 * insufficient privilege, a read-only standby, disk full. For all of them the attempt vanishes.
 *
 * Contract: docs/outbox.md Admin: "A call that throws when ferry owns the transaction is audited
 * afterwards with outcome `error` and the FERRY code, except `FERRY_OUTCOME_UNKNOWN`"; docs/inbox.md:
 * "A refused call (e.g. `FERRY_STATE_CONFLICT`) is audited with outcome `error` when the admin owns
 * the transaction"; migration 0006: "as is an action that failed when ferry owned its transaction
 * (outcome 'error', the FERRY code in results)".
 *
 * Why it matters: `ALTER ROLE ... SET lock_timeout` is common in production, and an operator's
 * retry of an event a long transaction holds then leaves no trace; an operator (or an intruder with
 * an operator's credentials) whose role lacks UPDATE on ferry's tables tries mutations and the
 * trail shows nothing, though the role may insert audit rows. The trail is where an incident
 * review looks for who tried what.
 *
 * Fix direction: skip the failure row only when the connection itself is gone (SQLSTATE class 08,
 * 57P0x, driver connection codes) or the outcome is unknown; attempt it otherwise (the insert's own
 * failure is already swallowed).
 */
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createOutboxAdmin, fromPg, InboxAdmin, isFerryError } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

function codeOf(error: unknown): unknown {
  return isFerryError(error) ? { code: error.code, sqlState: error.details.sqlState } : String(error);
}

async function auditRows(actor: string): Promise<unknown[]> {
  return database
    .t()
    .db.query(
      `SELECT action, outcome, results->>'code' AS code FROM ferry_operator_audit WHERE actor = $1 ORDER BY id`,
      [actor],
    );
}

it('a retry and a requeue refused by lock_timeout are audited as errors', async () => {
  const f = await database.fixture();
  const t = database.t();
  // A role or database setting many production databases carry.
  const pool = listened(new Pool({ connectionString: t.url, options: '-c lock_timeout=300' }));
  const holder = new Client({ connectionString: t.url });
  holder.on('error', () => undefined);
  await holder.connect();
  try {
    // A long application transaction holding the rows the operator acts on.
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM outbox_events WHERE id = $1::uuid FOR UPDATE', [f.failed]);
    await holder.query('SELECT 1 FROM ferry_inbox_receipts WHERE id = $1::uuid FOR UPDATE', [
      f.tenant.dead.id,
    ]);

    const retry = await createOutboxAdmin(fromPg(pool))
      .forTenant('acme')
      .retry(f.failed, { actor: 'review70-lock', reason: 'broker fixed' })
      .catch(codeOf);
    const requeue = await new InboxAdmin(pool)
      .forTenant('acme')
      .requeue({
        id: f.tenant.dead.id,
        expectedVersion: f.tenant.dead.expectedVersion,
        actor: 'review70-lock',
        reason: 'handler fixed',
      })
      .catch(codeOf);
    expect([retry, requeue]).toEqual([
      { code: 'FERRY_DATABASE_UNAVAILABLE', sqlState: '55P03' },
      { code: 'FERRY_DATABASE_UNAVAILABLE', sqlState: '55P03' },
    ]);
    await holder.query('ROLLBACK');

    // On HEAD: [] (no trace of either attempt).
    expect(await auditRows('review70-lock')).toEqual([
      { action: 'outbox.retry', outcome: 'error', code: 'FERRY_DATABASE_UNAVAILABLE' },
      { action: 'inbox.requeue', outcome: 'error', code: 'FERRY_DATABASE_UNAVAILABLE' },
    ]);
  } finally {
    await holder.end();
    await pool.end();
  }
});

it('a retry refused for a missing privilege is audited as an error by a role that may write the trail', async () => {
  const f = await database.fixture();
  const t = database.t();
  const role = `review70_${randomBytes(4).toString('hex')}`;
  await t.db.execute(`CREATE ROLE ${role} LOGIN`);
  // A read-only operator role that may record what it attempts.
  await t.db.execute(`GRANT SELECT ON outbox_events, ferry_operator_audit TO ${role}`);
  await t.db.execute(`GRANT INSERT ON ferry_operator_audit TO ${role}`);
  const url = new URL(t.url);
  url.username = role;
  const pool = listened(new Pool({ connectionString: url.toString() }));
  try {
    // The role can write an audit row (checked, then rolled back).
    const probe = await pool.connect();
    try {
      await probe.query('BEGIN');
      await probe.query(
        `INSERT INTO ferry_operator_audit (actor, action, scope, outcome) VALUES ('probe', 'probe', 'operator', 'none')`,
      );
      await probe.query('ROLLBACK');
    } finally {
      probe.release();
    }

    const retry = await createOutboxAdmin(fromPg(pool))
      .forTenant('acme')
      .retry(f.failed, { actor: 'review70-denied', reason: 'try it' })
      .catch(codeOf);
    expect(retry).toEqual({ code: 'FERRY_DATABASE_UNAVAILABLE', sqlState: '42501' });
    // On HEAD: [] (the refused attempt leaves no trace).
    expect(await auditRows('review70-denied')).toEqual([
      { action: 'outbox.retry', outcome: 'error', code: 'FERRY_DATABASE_UNAVAILABLE' },
    ]);
  } finally {
    await pool.end();
    await t.db.execute(`DROP OWNED BY ${role}`);
    await t.db.execute(`DROP ROLE ${role}`);
  }
});
