/**
 * A claim taken from the worker (the operator's forced release, a lease recovered by another
 * worker) while its handler transaction still waited for a session of the application's pool.
 *
 * What happened on main: the worker read every interruption before the handler started as its
 * pool's outage: an `infrastructure-error` at `handler-transaction`, the outage counted in
 * `Inbox.sessionOutage` (health's "inbox session" check goes down on it), a give-back of a claim
 * no longer its own, and the pass counted the receipt `unresolved`, never `lease-lost`.
 *
 * What should happen: it is the lease lost, as after the handler started: a `lease-lost` event,
 * counted in `leaseLost`, no outage and no infrastructure error; the receipt stays as the operator
 * left it, and the handler never runs for the lost claim.
 */
import { randomUUID } from 'node:crypto';
import { InboxAdmin, type InboxEvent } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
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

it('a claim force-released while its transaction waits for a session is lease-lost, not an outage', async () => {
  const app = await busyApplicationPool(t);
  const tenantId = `t-${randomUUID()}`;
  const ran: string[] = [];
  const events: InboxEvent[] = [];
  try {
    const inbox = makeInbox(app.adapter, {
      worker: {
        concurrency: 1,
        leaseMs: 10_000,
        heartbeatIntervalMs: 100,
        // Long enough that the session is lent (below) before the wait ends.
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
    const released = await new InboxAdmin(t.db)
      .forTenant(tenantId)
      .release({ claimToken, force: true, actor: 'ops', reason: 'looks stuck' });
    expect(released).toEqual({ released: [record.id], running: [] });
    // Five heartbeats for a renewal to find the claim gone before the pool lends the session. On a
    // machine too slow for that, the transaction's claim check finds it gone instead: the same
    // outcome is expected either way.
    await new Promise((resolve) => setTimeout(resolve, 500));
    app.free();
    const result = await pass;
    const row = await receiptRow(t, record.id);
    expect({
      ran,
      leaseLost: result.leaseLost,
      observed: observedOutcomes(events),
      outage: inbox.sessionOutage,
      row: { status: row.status, attempts: row.attempts, claim: row.claim_token },
    }).toEqual({
      ran: [],
      leaseLost: 1,
      observed: ['lease-lost'],
      outage: null,
      row: { status: 'PENDING', attempts: 0, claim: null },
    });
    await inbox.close();
  } finally {
    await app.end();
  }
});
