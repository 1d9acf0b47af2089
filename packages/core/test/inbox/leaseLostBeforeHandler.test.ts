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
import { Pool } from 'pg';
import { fromPg, InboxAdmin, InboxPermanentError, pgTransactions, type InboxEvent } from '@ferry/core';
import { listened } from '../../../../test-support/oneStatement';
import type { SqlExecutor } from '../../src/sql/executor';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  busyApplicationPool,
  claimTokenOnceClaimed,
  expireLease,
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

/**
 * The same waits on a database slow enough that the claim's lease ran out there though nobody
 * claimed it since (fault-tests/operations/slow-database): the renewal that finds it not held, or
 * the transaction's claim check, reads it as lost. On main the claim was reported lease-lost and
 * left PROCESSING under its token, to be recovered as abandoned for one more attempt: attempts no
 * handler used. It is still this worker's: given back uncharged, and its handler runs once later.
 */
describe('a claim whose lease ran out on the database, nobody claiming it since', () => {
  it.each([
    ['found by a renewal while its transaction waits for a session', 100, 500],
    ['found by the claim check once the session is lent', 20_000, 0],
  ])('%s: given back uncharged', async (_case, heartbeatIntervalMs, pauseMs) => {
    const app = await busyApplicationPool(t);
    // Its own consumer: the first test's receipt, released and due, is not claimed here.
    const consumer = `lapsed-${heartbeatIntervalMs}`;
    const ran: string[] = [];
    const events: InboxEvent[] = [];
    try {
      const inbox = makeInbox(app.adapter, {
        worker: {
          concurrency: 1,
          leaseMs: 60_000,
          heartbeatIntervalMs,
          retryBaseMs: 1,
          retryMaxMs: 1,
          transactionMaxWaitMs: 20_000,
          transactionTimeoutMs: 30_000,
        },
        handlers: {
          [consumer]: async (_payload: unknown, context: { receiptId: string }) =>
            void ran.push(context.receiptId),
        } as never,
        observer: (event: InboxEvent) => void events.push(event),
      });
      const { record } = await inbox.accept(message({ consumer }));
      const pass = inbox.runOnce();
      await claimTokenOnceClaimed(t, record.id);
      await expireLease(t, record.id);
      // Five heartbeats for a renewal to find it (first case); none comes in the second.
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      app.free();
      const first = await pass;
      const row = await receiptRow(t, record.id);
      expect({
        ran,
        leaseLost: first.leaseLost,
        row: {
          status: row.status,
          attempts: row.attempts,
          lifetime: row.lifetime_attempts,
        },
      }).toEqual({
        ran: [],
        leaseLost: 0,
        row: { status: 'PENDING', attempts: 0, lifetime: 0 },
      });
      expect(observedOutcomes(events)).not.toContain('lease-lost');
      // A claim that cycled (health's `inbox handler transactions`), until a handler began.
      expect(inbox.claimCycling).toMatchObject({ claims: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await inbox.runOnce();
      expect({ completed: second.completed, ran }).toEqual({ completed: 1, ran: [record.id] });
      expect(inbox.claimCycling).toBeNull();
      expect(await receiptRow(t, record.id)).toMatchObject({
        status: 'COMPLETED',
        attempts: 1,
        lifetime_attempts: 1,
      });
      await inbox.close();
    } finally {
      await app.end();
    }
  });
});

/**
 * Review 29's poison receipt claimed twice, caught in a loaded run: under a SERIALIZABLE default the
 * handler transaction's first statement (the claim check) was refused with 40001 before the handler
 * ran, and the worker scheduled that as the receipt's failure: a retry with the attempt spent (at
 * maxAttempts 1, DEAD "exhausted" without a handler run). A failure of ferry's own statements
 * before the handler started is no attempt: the claim is given back uncharged.
 */
it("a failure of the claim check itself (40001) costs no attempt: given back, and the handler's one run decides", async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 4 }));
  const adapter = { ...pgTransactions(pool), db: fromPg(pool) };
  let refused = 0;
  const refusing = {
    ...adapter,
    bind: (tx: Parameters<typeof adapter.bind>[0]) => {
      const db = adapter.bind(tx);
      const refuseFirst: SqlExecutor['query'] = (sql, values, options) => {
        if (refused === 0) {
          refused += 1;
          const error = Object.assign(
            new Error('could not serialize access due to read/write dependencies'),
            {
              code: '40001',
            },
          );
          return Promise.reject(error);
        }
        return db.query(sql, values, options);
      };
      return { ...db, query: refuseFirst };
    },
  };
  const runs: string[] = [];
  const events: InboxEvent[] = [];
  try {
    const inbox = makeInbox(refusing, {
      worker: { concurrency: 1, maxAttempts: 1, retryBaseMs: 1, retryMaxMs: 1 },
      handlers: {
        poison: async (_payload: unknown, context: { receiptId: string }) => {
          runs.push(context.receiptId);
          throw new InboxPermanentError('cannot be processed');
        },
      } as never,
      observer: (event: InboxEvent) => void events.push(event),
    });
    const { record } = await inbox.accept(message({ consumer: 'poison' }));
    const first = await inbox.runOnce();
    expect({ refused, runs, dead: first.dead, row: await receiptRow(t, record.id) }).toMatchObject({
      refused: 1,
      runs: [],
      dead: 0,
      row: { status: 'PENDING', attempts: 0, lifetime_attempts: 0 },
    });
    expect(observedOutcomes(events)).toEqual(['infrastructure-error:handler-transaction']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await inbox.runOnce();
    expect({ runs, row: await receiptRow(t, record.id) }).toMatchObject({
      runs: [record.id],
      row: { status: 'DEAD', attempts: 1, lifetime_attempts: 1 },
    });
    await inbox.close();
  } finally {
    await pool.end();
  }
});
