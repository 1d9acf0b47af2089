/**
 * Every ferry object that keeps an application's node-postgres client across calls (the outbox
 * admin, the inbox admins, the audit log) reads whether the client is in the application's
 * transaction at each call, as emit does: the client's BEGIN and COMMIT are the application's and
 * come and go between calls (review 70; InboxAdmin's cases are in review70-pgClientAdmin.test.ts).
 */
import { Client } from 'pg';
import { createAuditLog, createOutboxAdmin, isFerryError } from '@ferry/core';
import { useAdminDatabase } from '../../../../test-support/adminFixture';

const database = useAdminDatabase();

async function connectedClient(): Promise<Client> {
  const client = new Client({ connectionString: database.t().url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function statusOf(id: string): Promise<string | undefined> {
  const [row] = await database
    .t()
    .db.query<{ status: string }>('SELECT status FROM outbox_events WHERE id = $1::uuid', [id]);
  return row?.status;
}

async function auditCount(actor: string): Promise<number> {
  const [row] = await database
    .t()
    .db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_operator_audit WHERE actor = $1', [actor]);
  return row!.n;
}

function refusal(error: unknown): unknown {
  return isFerryError(error)
    ? { code: error.code, field: (error as { field?: string }).field }
    : String(error);
}

it("an outbox admin built on an idle pg client joins the application's later BEGIN and is rolled back with it", async () => {
  const f = await database.fixture();
  const client = await connectedClient();
  try {
    const admin = createOutboxAdmin(client).forTenant('acme');
    await client.query('BEGIN');
    const retried = await admin.retry(f.failed, { actor: 'status-idle-built', reason: 'inside BEGIN' });
    const during = client.getTransactionStatus();
    await client.query('ROLLBACK');
    expect({
      retried: retried.outcome,
      during,
      status: await statusOf(f.failed),
      audit: await auditCount('status-idle-built'),
    }).toEqual({ retried: 'applied', during: 'T', status: 'FAILED', audit: 0 });
  } finally {
    await client.end();
  }
});

it('an outbox admin built inside a transaction runs a dry run in a transaction of its own once the client is idle', async () => {
  const f = await database.fixture();
  const client = await connectedClient();
  try {
    await client.query('BEGIN');
    const admin = createOutboxAdmin(client).forTenant('acme');
    await client.query('COMMIT');
    const answer = await admin
      .retry(f.failed, { actor: 'status-tx-built', dryRun: true })
      .catch((error: unknown) => (isFerryError(error) ? error.message : String(error)));
    expect({ answer, status: await statusOf(f.failed), audit: await auditCount('status-tx-built') }).toEqual({
      answer: { id: f.failed, outcome: 'applied' },
      status: 'FAILED',
      audit: 1,
    });
  } finally {
    await client.end();
  }
});

it('an admin on a pg client whose BEGIN is not answered yet at the call is refused, nothing sent', async () => {
  const f = await database.fixture();
  const client = await connectedClient();
  try {
    const admin = createOutboxAdmin(client).forTenant('acme');
    const begin = client.query('BEGIN');
    const answer = await admin
      .retry(f.failed, { actor: 'status-pending-begin' })
      .then((result) => result.outcome, refusal);
    await begin;
    await client.query('ROLLBACK');
    expect({
      answer,
      status: await statusOf(f.failed),
      audit: await auditCount('status-pending-begin'),
    }).toEqual({
      answer: { code: 'FERRY_VALIDATION_FAILED', field: 'client' },
      status: 'FAILED',
      audit: 0,
    });
  } finally {
    await client.end();
  }
});

it('an audit log built inside a transaction keeps its statement deadline once the pg client is idle', async () => {
  const client = await connectedClient();
  const holder = await connectedClient();
  try {
    await client.query('BEGIN');
    const audit = createAuditLog(client, { statementTimeoutMs: 200 });
    await client.query('COMMIT');
    // Another session holds the trail: a read waits for it.
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE ferry_operator_audit IN ACCESS EXCLUSIVE MODE');
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('no answer within 10 s'), 10_000);
    });
    const answer = await Promise.race([audit.list().then(() => 'listed', refusal), bound]);
    clearTimeout(timer);
    await holder.query('ROLLBACK');
    // On HEAD: 'no answer within 10 s' (taken for inside the application's transaction: no deadline).
    expect(answer).toEqual({ code: 'FERRY_TIMEOUT', field: undefined });
  } finally {
    await holder.end();
    await client.end();
  }
});
