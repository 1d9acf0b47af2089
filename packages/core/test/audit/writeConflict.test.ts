/**
 * An admin action on Prisma whose transaction PostgreSQL refuses at COMMIT for a concurrent
 * transaction (serialization_failure, 40001: SERIALIZABLE's read/write dependencies, or a deferred
 * constraint trigger). Prisma does not wrap an error of its COMMIT: it throws the driver adapter's
 * DriverAdapterError itself (message `TransactionWriteConflict`, the SQLSTATE and PostgreSQL's
 * message in its `cause`), which the one translation (sql/dbErrors.ts, sqlState.ts) did not read:
 * on HEAD the action failed with an unclassified FERRY_DATABASE_ERROR "TransactionWriteConflict"
 * (sqlState null, PostgreSQL's message lost, a warning logged), and withSerializationRetry, which
 * runs a refused transaction again, did not see a refusal (one attempt, not SERIALIZATION_ATTEMPTS).
 *
 * Expected: the refusal is what a statement's 40001 is: a retriable FERRY_DATABASE_UNAVAILABLE
 * with sqlState 40001 and PostgreSQL's message, run again like one, and audited as a failed
 * action (outcome `error`, the session being there to write the row).
 *
 * The refusal is made by PostgreSQL: a deferred constraint trigger raising 40001 at COMMIT, counting
 * its runs in a sequence (not rolled back with the refused transaction).
 */
import { createOutboxAdmin, InboxAdmin, isFerryError } from '@ferry/core';
import { useAdminDatabase } from '../../../../test-support/adminFixture';
import { SERIALIZATION_ATTEMPTS } from '../../src/sql/serializationRetry';

const database = useAdminDatabase();

beforeAll(async () => {
  const { db } = database.t();
  await db.execute('CREATE SEQUENCE refused_commits');
  await db.execute(`CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM nextval('refused_commits');
      RAISE EXCEPTION 'could not serialize access due to read/write dependencies among transactions'
        USING ERRCODE = 'serialization_failure';
    END $$`);
});

async function refusedCommits(): Promise<number> {
  const [row] = await database
    .t()
    .db.query<{ n: string }>(
      'SELECT last_value - CASE WHEN is_called THEN 0 ELSE 1 END AS n FROM refused_commits',
    );
  return Number(row?.n);
}

async function refuseCommitsOf(table: string, id: string): Promise<void> {
  await database.t().db.execute(
    `CREATE CONSTRAINT TRIGGER refuse_${table} AFTER UPDATE ON ${table} DEFERRABLE INITIALLY DEFERRED
     FOR EACH ROW WHEN (NEW.id = '${id}'::uuid) EXECUTE FUNCTION refuse_commit()`,
  );
}

function shape(error: unknown): unknown {
  if (!isFerryError(error)) return { untyped: String(error) };
  return {
    code: error.code,
    retriable: error.retriable,
    sqlState: error.details.sqlState,
    message: error.message,
  };
}

async function auditRow(action: string, actor: string): Promise<unknown> {
  const [row] = await database
    .t()
    .db.query(
      `SELECT outcome, results->>'code' AS code FROM ferry_operator_audit WHERE action = $1 AND actor = $2`,
      [action, actor],
    );
  return row;
}

const REFUSED = {
  code: 'FERRY_DATABASE_UNAVAILABLE',
  retriable: true,
  sqlState: '40001',
  message: expect.stringContaining('could not serialize access'),
};

it('an outbox retry refused at COMMIT is run again, fails typed and retriable, and is audited', async () => {
  const f = await database.fixture();
  await refuseCommitsOf('outbox_events', f.failed);
  const before = await refusedCommits();
  const error = await createOutboxAdmin(database.t().prisma)
    .forTenant('acme')
    .retry(f.failed, { actor: 'conflict-retry' })
    .then(() => 'applied', shape);
  expect({ error, runs: (await refusedCommits()) - before }).toEqual({
    error: REFUSED,
    runs: SERIALIZATION_ATTEMPTS,
  });
  expect(await auditRow('outbox.retry', 'conflict-retry')).toEqual({
    outcome: 'error',
    code: 'FERRY_DATABASE_UNAVAILABLE',
  });
});

it('an inbox requeue refused at COMMIT is run again, fails typed and retriable, and is audited', async () => {
  const f = await database.fixture();
  await refuseCommitsOf('ferry_inbox_receipts', f.tenant.dead.id);
  const before = await refusedCommits();
  const error = await new InboxAdmin(database.t().prisma)
    .forTenant('acme')
    .requeue({
      id: f.tenant.dead.id,
      expectedVersion: f.tenant.dead.expectedVersion,
      actor: 'conflict-requeue',
      reason: 'handler fixed',
    })
    .then(() => 'applied', shape);
  expect({ error, runs: (await refusedCommits()) - before }).toEqual({
    error: REFUSED,
    runs: SERIALIZATION_ATTEMPTS,
  });
  expect(await auditRow('inbox.requeue', 'conflict-requeue')).toEqual({
    outcome: 'error',
    code: 'FERRY_DATABASE_UNAVAILABLE',
  });
});
