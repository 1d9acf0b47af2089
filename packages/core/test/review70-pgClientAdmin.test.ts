/**
 * Review 70: an admin built on a node-postgres client (`new InboxAdmin(client)`, typed and documented
 * to take one; `createOutboxAdmin(client)` takes one at run time too) reads whether the client is inside the application's transaction
 * once, when the admin is built (executorFor -> fromPgClient -> `bind(client,
 * getTransactionStatus() !== 'I')`), and keeps that answer for every later call.
 *
 * An admin is a long-lived object (built once, at start-up or in a DI container), while the
 * client's status changes with every BEGIN / COMMIT the application sends on it:
 *
 * - built while the client was idle, then called inside the application's `BEGIN`: ferry sends
 *   its own BEGIN (PostgreSQL only warns, 25001), runs the change and its audit row, and COMMITs:
 *   that COMMIT commits the application's transaction, its own earlier writes included. The
 *   application's ROLLBACK afterwards finds no transaction: nothing is rolled back.
 * - built inside a transaction, then called once the client is idle: every call runs as if joined
 *   (no transaction of its own), so a dry run's SAVEPOINT fails with PostgreSQL's 25P01 ("SAVEPOINT
 *   can only be used in transaction blocks", FERRY_DATABASE_ERROR) and a real change and its audit
 *   row commit as separate statements.
 *
 * Contract: packages/core/README.md "Transactions": "`emit` / `emitMany` (and `InboxAdmin`) take the
 * application's transaction as it is: ... a pg `PoolClient` (or `Client`) after the application's
 * `BEGIN` ...: the events commit with it and vanish with its rollback", and "taken for idle, its own
 * COMMIT would commit yours"; docs/inbox.md: `new InboxAdmin(client | transaction | executor)`
 * "takes the application's client ... or one of its transactions (joined)"; each audited action
 * "takes `dryRun: true`: ... the result is what the real call would return". emit() reads the
 * status at each call and is right.
 *
 * Why it matters: an operator service that wraps a requeue and its own bookkeeping in one
 * transaction and rolls back on a later failure gets the requeue (and the bookkeeping it meant to
 * undo) committed anyway: the DEAD message runs again although the service said no.
 *
 * Fix direction: read the client's status at each call (build the executor per call, as emit does,
 * or have fromPgClient's `transaction()` / `inTransaction` ask getTransactionStatus() each time).
 */
import { Client } from 'pg';
import { InboxAdmin, isFerryError } from '@ferry/core';
import { useAdminDatabase } from '../../../test-support/adminFixture';

const database = useAdminDatabase();

async function connectedClient(): Promise<Client> {
  const client = new Client({ connectionString: database.t().url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function one<T>(text: string, values: unknown[] = []): Promise<T> {
  const [row] = await database.t().db.query<T>(text, values);
  return row as T;
}

it("an admin built on an idle pg client, called inside the application's BEGIN, is rolled back with it", async () => {
  const f = await database.fixture();
  await database.t().db.execute('CREATE TABLE review70_marker (n int)');
  const client = await connectedClient();
  try {
    // Built at start-up, while the client is idle.
    const inbox = new InboxAdmin(client).forTenant('acme');

    await client.query('BEGIN');
    await client.query('INSERT INTO review70_marker VALUES (1)');
    const requeued = await inbox.requeue({
      id: f.tenant.dead.id,
      expectedVersion: f.tenant.dead.expectedVersion,
      actor: 'review70-idle',
      reason: 'handler fixed',
    });
    expect(requeued.status).toBe('PENDING');
    const during = client.getTransactionStatus();
    await client.query('ROLLBACK');

    const after = {
      during,
      marker: (await one<{ n: number }>('SELECT count(*)::int AS n FROM review70_marker')).n,
      receipt: (
        await one<{ status: string }>('SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid', [
          f.tenant.dead.id,
        ])
      ).status,
      audit: (
        await one<{ n: number }>(
          `SELECT count(*)::int AS n FROM ferry_operator_audit WHERE actor = 'review70-idle'`,
        )
      ).n,
    };
    // On HEAD: { during: 'I', marker: 1, receipt: 'PENDING', audit: 1 }: the admin's own COMMIT
    // committed the application's transaction half-way.
    expect(after).toEqual({ during: 'T', marker: 0, receipt: 'DEAD', audit: 0 });
  } finally {
    await client.end();
  }
});

it('an admin built inside a transaction, called once the pg client is idle, still answers a dry run', async () => {
  const f = await database.fixture();
  const client = await connectedClient();
  try {
    await client.query('BEGIN');
    const inbox = new InboxAdmin(client).forTenant('acme');
    await client.query('COMMIT');

    const dryRun = await inbox
      .requeue({
        id: f.tenant.dead.id,
        expectedVersion: f.tenant.dead.expectedVersion,
        actor: 'review70-dry',
        reason: 'preview',
        dryRun: true,
      })
      .then((record) => record.status)
      .catch((error: unknown) =>
        isFerryError(error) ? { code: error.code, message: error.message } : String(error),
      );
    // On HEAD: { code: 'FERRY_DATABASE_ERROR', message: 'inbox admin failed: SAVEPOINT can only be
    // used in transaction blocks' } (PostgreSQL's 25P01).
    expect(dryRun).toBe('PENDING');
    const [row] = await database
      .t()
      .db.query<{ status: string }>('SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid', [
        f.tenant.dead.id,
      ]);
    expect(row?.status).toBe('DEAD');
  } finally {
    await client.end();
  }
});
