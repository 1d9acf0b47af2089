/**
 * A handler transaction whose first statement (the claim check, beginHandler) runs while an
 * operator's forced release holds the receipt's advisory lock, and that release then does not
 * take the receipt: it rolls back (an InboxAdmin in the application's own transaction, which
 * fails), or it found the row locked by a lease renewal and answered it `running`.
 *
 * What happened on main: the claim check read the claim as lost (the lock held exclusively), the
 * handler never ran, and the worker then found the claim still its own and recorded a failure: a
 * retry charged an attempt no handler used ("claim lost before completion"), and with no attempt
 * left the receipt went DEAD although its handler never ran.
 *
 * What should happen: the handler never ran, so the claim is given back with its attempt, as
 * every claim whose handler did not start (counted `unresolved`, no failure, no outage); the next
 * pass runs it once.
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin, type InboxEvent } from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { gate } from '../../../../test-support/holds';
import { receiptLock } from '../../src/inbox/sql/fragments';
import {
  busyApplicationPool,
  claimTokenOnceClaimed,
  makeInbox,
  message,
  observedOutcomes,
  receiptRow,
} from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A statement of the worker (not a lease renewal) waiting for a lock on the receipt's row. */
async function workerWaitsOnRow(): Promise<boolean> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND query ILIKE '%ferry_inbox_receipts%' AND query NOT ILIKE '%SET lease_expires_at = now()%'`,
  );
  return (row?.n ?? 0) > 0;
}

it('a claim check during a forced release that is rolled back charges no attempt', async () => {
  const app = await busyApplicationPool(t);
  const tenantId = `t-${randomUUID()}`;
  const ran: string[] = [];
  const events: InboxEvent[] = [];
  const inside = gate();
  const done = gate();
  let operator: Promise<unknown> | undefined;
  try {
    const inbox = makeInbox(app.adapter, {
      worker: {
        concurrency: 1,
        // One attempt: a charged one makes the receipt DEAD.
        maxAttempts: 1,
        leaseMs: 20_000,
        heartbeatIntervalMs: 500,
        transactionMaxWaitMs: 20_000,
        transactionTimeoutMs: 30_000,
      },
      handlers: {
        orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
      } as never,
      observer: (event: InboxEvent) => void events.push(event),
    });
    const { record } = await inbox.accept(message({ tenantId }));
    const pass = inbox.runOnce();
    const claimToken = await claimTokenOnceClaimed(t, record.id);
    // The operator's transaction: a forced release, then the transaction fails and rolls back.
    operator = t.db
      .transaction(async (tx) => {
        const answer = await new InboxAdmin(tx)
          .forTenant(tenantId)
          .release({ claimToken, force: true, actor: 'ops', reason: 'looks stuck' });
        expect(answer).toEqual({ released: [record.id], running: [] });
        inside.open();
        await done.promise;
        throw new Error('the operator rolled back');
      })
      .catch((error: unknown) => error);
    await Promise.race([inside.promise, operator]);
    // The handler transaction begins now, while the release holds the receipt's lock.
    app.free();
    await waitUntil('the worker waits for the released row', workerWaitsOnRow, {
      timeoutMs: 20_000,
      intervalMs: 20,
    });
    done.open();
    expect(await operator).toEqual(new Error('the operator rolled back'));
    const first = await pass;
    const afterFirst = await receiptRow(t, record.id);
    const second = await inbox.runOnce();
    const row = await receiptRow(t, record.id);
    expect({
      first: { unresolved: first.unresolved, retried: first.retried, dead: first.dead },
      afterFirst: {
        status: afterFirst.status,
        attempts: afterFirst.attempts,
        lifetime: afterFirst.lifetime_attempts,
      },
      observed: observedOutcomes(events),
      outage: inbox.sessionOutage,
      second: second.completed,
      ran,
      row: { status: row.status, attempts: row.attempts, lifetime: row.lifetime_attempts },
    }).toEqual({
      first: { unresolved: 1, retried: 0, dead: 0 },
      afterFirst: { status: 'PENDING', attempts: 0, lifetime: 0 },
      observed: ['completed'],
      outage: null,
      second: 1,
      ran: [record.id],
      row: { status: 'COMPLETED', attempts: 1, lifetime: 1 },
    });
    await inbox.close();
  } finally {
    done.open();
    await operator;
    await app.end();
  }
});

it('on Prisma: a claim check while a forced release holds the receipt lock, then leaves the claim, charges no attempt', async () => {
  const tenantId = `t-${randomUUID()}`;
  const ran: string[] = [];
  const events: InboxEvent[] = [];
  const inbox = makeInbox(t.prisma, {
    worker: { concurrency: 1, maxAttempts: 1, transactionMaxWaitMs: 20_000 },
    handlers: {
      orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
    } as never,
    observer: (event: InboxEvent) => void events.push(event),
  });
  const { record } = await inbox.accept(message({ tenantId }));
  // The handler transaction begins while a forced release holds the receipt's lock exclusively
  // (as one does from its statement to its end, whatever it then answers); it ends afterwards.
  const holder = await t.db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(${receiptLock('$1::uuid')})::text`, [record.id]);
    return inbox.runOnce();
  });
  const afterFirst = await receiptRow(t, record.id);
  const second = await inbox.runOnce();
  const row = await receiptRow(t, record.id);
  expect({
    first: { unresolved: holder.unresolved, dead: holder.dead },
    afterFirst: { status: afterFirst.status, attempts: afterFirst.attempts },
    observed: observedOutcomes(events),
    second: second.completed,
    ran,
    row: { status: row.status, attempts: row.attempts, lifetime: row.lifetime_attempts },
  }).toEqual({
    first: { unresolved: 1, dead: 0 },
    afterFirst: { status: 'PENDING', attempts: 0 },
    observed: ['completed'],
    second: 1,
    ran: [record.id],
    row: { status: 'COMPLETED', attempts: 1, lifetime: 1 },
  });
});
