/**
 * Review 105 (the inbox worker's handler side of an application pool ended for good): the
 * application ended the pool its handler transactions run on (pool.end(), FERRY_CLOSED, as pg and
 * Kysely throw it or as pgTransactions translates it) while ferry's own statements run on another.
 *
 * What happened on main: each claim was given back (review 103, no attempt spent) and claimed
 * again after the outage delay (review 104), for ever: the worker said 'running', liveness up,
 * although no handler transaction can ever begin on an ended pool.
 * What should happen: as the claim side's rule (EndedClientStop, review 87), the poll loop stops:
 * state 'stopped' with its stopReason (liveness reports it down), the claims given back with their
 * attempts, nothing claimed afterwards; close() closes it as ever. runOnce() (a worker never
 * started) counts each such claim `unresolved`, given back.
 */
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createHealth, fromPg, pgTransactions, type InboxEvent, type TransactionAdapter } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message, receiptRow, waitFor } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('TRUNCATE ferry_inbox_receipts');
});

const WORKER = { concurrency: 2, maxAttempts: 1, retryBaseMs: 50, retryMaxMs: 200 };

/** The application's handler transactions on `appPool`: translated by ferry, or as pg throws them. */
const ADAPTERS: ReadonlyArray<[string, (appPool: Pool, ferryPool: Pool) => TransactionAdapter<PoolClient>]> =
  [
    [
      'pgTransactions (translated)',
      (appPool, ferryPool) => ({ ...pgTransactions(appPool), db: fromPg(ferryPool) }),
    ],
    [
      'an adapter that does not translate',
      (appPool, ferryPool) => ({
        ...pgTransactions(appPool),
        db: fromPg(ferryPool),
        transaction: async (work) => {
          const client = await appPool.connect();
          try {
            await client.query('BEGIN');
            const result = await work(client);
            await client.query('COMMIT');
            return result;
          } finally {
            client.release();
          }
        },
      }),
    ],
  ];

describe.each(ADAPTERS)('an application pool ended for good, %s', (_name, adapterOf) => {
  it('stops the poll loop (state stopped, liveness down), the claims given back unspent', async () => {
    const appPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 3 }));
    const events: InboxEvent[] = [];
    const ran: string[] = [];
    try {
      const inbox = makeInbox(adapterOf(appPool, ferryPool), {
        worker: WORKER,
        handlers: {
          orders: async (_p: unknown, c: { receiptId: string }) => void ran.push(c.receiptId),
        } as never,
        observer: (event: InboxEvent) => void events.push(event),
      });
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) ids.push((await inbox.accept(message())).record.id);
      await appPool.end();
      inbox.start();
      await waitFor('the worker to stop', async () => inbox.state === 'stopped', 5_000);
      const health = createHealth({ db: t.db, inbox });
      const live = await health.liveness();
      // Nothing claimed once stopped: the give-backs seen so far are all there will be.
      const giveBacks = events.filter((e) => e.type === 'infrastructure-error').length;
      await new Promise((resolve) => setTimeout(resolve, 500));
      const rows = await Promise.all(ids.map((id) => receiptRow(t, id)));
      expect({
        ran,
        stopReason: inbox.stopReason,
        live: live.checks[0],
        more: events.filter((e) => e.type === 'infrastructure-error').length - giveBacks,
        rows: rows.map((row) => [row.status, row.attempts, row.lease_expires_at]),
        charged: events.filter((e) => e.type === 'retry' || e.type === 'dead'),
      }).toEqual({
        ran: [],
        stopReason: expect.stringMatching(/FERRY_CLOSED/),
        live: {
          name: 'inbox worker',
          status: 'down',
          detail: expect.stringMatching(/^state stopped: .*FERRY_CLOSED/),
        },
        more: 0,
        rows: ids.map(() => ['PENDING', 0, null]),
        charged: [],
      });
      await inbox.close();
      expect(inbox.state).toBe('closed');
    } finally {
      await ferryPool.end();
    }
  });

  it('runOnce() on a worker never started counts each claim unresolved, given back unspent', async () => {
    const appPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 3 }));
    try {
      const inbox = makeInbox(adapterOf(appPool, ferryPool), {
        worker: WORKER,
        handlers: { orders: async () => undefined } as never,
      });
      const ids = [(await inbox.accept(message())).record.id, (await inbox.accept(message())).record.id];
      await appPool.end();
      const result = await inbox.runOnce();
      const rows = await Promise.all(ids.map((id) => receiptRow(t, id)));
      expect({
        result,
        state: inbox.state,
        rows: rows.map((row) => [row.status, row.attempts]),
      }).toEqual({
        result: { claimed: 2, completed: 0, retried: 0, dead: 0, leaseLost: 0, unresolved: 2 },
        state: 'idle',
        rows: [
          ['PENDING', 0],
          ['PENDING', 0],
        ],
      });
      await inbox.close();
    } finally {
      await ferryPool.end();
    }
  });
});
