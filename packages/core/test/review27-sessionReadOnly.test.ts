/**
 * Review finding (failed first), review 27 of a1c08e8 (the inbox handler transaction is started again at READ COMMITTED when its
 * first statement finds another isolation level). The fix pins the isolation level only: the other
 * transaction characteristic a handler can leave on a pooled connection, READ ONLY
 * (`SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY`, or the same with SERIALIZABLE, READ
 * ONLY, DEFERRABLE for a consistent report), still reaches the next handler's transaction on that
 * connection: beginHandler does not read `transaction_read_only`, the retry's
 * `BEGIN ISOLATION LEVEL READ COMMITTED` keeps the session's READ ONLY, and ferry's own
 * statements in the handler transaction (its completion of the receipt) fail with 25006 in it. Another tenant's receipt, whose
 * handler did nothing wrong, is retried on the same connection until DEAD.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type PoolClient } from 'pg';
import { fromPg, pgTransactions, type TransactionAdapter } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { createBusinessTable, makeInbox, message, receiptRow } from './inbox/helpers';

const WORKER = {
  concurrency: 1,
  prefetch: 0,
  leaseMs: 4_000,
  heartbeatIntervalMs: 150,
  transactionTimeoutMs: 10_000,
  maxAttempts: 3,
} as const;

/** Runs the worker until the receipt is COMPLETED or DEAD, at most `rounds` times. */
async function settle(inbox: { runOnce(): Promise<unknown> }, t: TestDatabase, id: string, rounds: number) {
  for (let i = 0; i < rounds; i += 1) {
    const { status } = await receiptRow(t, id);
    if (status === 'COMPLETED' || status === 'DEAD') break;
    await inbox.runOnce();
    await sleep(5);
  }
  return receiptRow(t, id);
}

describe('review27: a session READ ONLY default left on the pooled connection by another handler', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  const LEFT: Array<[string, string]> = [
    ['READ ONLY', 'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY'],
    [
      'SERIALIZABLE, READ ONLY, DEFERRABLE (the retry at READ COMMITTED keeps READ ONLY)',
      'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE',
    ],
  ];

  // User: pgTransactions on a pool of one connection for the handlers, ferry's own statements on
  // another pool (`db: fromPg(pool)`), as in review 26. Tenant "acme"'s reporting handler wants a
  // safe read-only snapshot and writes `SET SESSION CHARACTERISTICS AS TRANSACTION ... READ ONLY`
  // (meant `SET TRANSACTION`); it commits and its connection goes back to the pool. The next
  // handler on that connection is tenant "globex"'s handler, which only reads.
  // Contract: a handler cannot harm its neighbours (the isolation-level fix's own promise: a
  // session left by a handler does not change ferry's handler transaction); globex's handler
  // succeeds, so its receipt is COMPLETED.
  // Instead: the handler transaction inherits READ ONLY (a1c08e8 pins only the isolation level);
  // a statement of ferry's fails with "error [25006]: cannot execute SELECT in a read-only
  // transaction" (the handler itself only reads), and globex's receipt is retried on the same
  // connection until DEAD with that last_error.
  it.each(LEFT)(
    'pgTransactions: the next handler on the connection still completes (%s)',
    async (_name, set) => {
      const handlerPool = new Pool({ connectionString: t.url, max: 1 });
      const ferryPool = new Pool({ connectionString: t.url, max: 2 });
      const adapter: TransactionAdapter<PoolClient> = {
        ...pgTransactions(handlerPool),
        db: fromPg(ferryPool),
      };
      const inbox = makeInbox(adapter, {
        worker: WORKER,
        handlers: {
          report: async (_payload, context) => {
            await context.tx.query(set);
            await context.tx.query('SELECT count(*) FROM business_rows');
          },
          lookup: async (_payload, context) => {
            await context.tx.query('SELECT count(*) FROM business_rows');
          },
        },
      });
      try {
        const report = await inbox.accept(message({ consumer: 'report', tenantId: 'acme' }));
        expect(await settle(inbox, t, report.record.id, 2)).toMatchObject({ status: 'COMPLETED' });
        const lookup = await inbox.accept(message({ consumer: 'lookup', tenantId: 'globex' }));
        const row = await settle(inbox, t, lookup.record.id, WORKER.maxAttempts + 1);
        expect({ status: row.status, lastError: row.last_error }).toEqual({
          status: 'COMPLETED',
          lastError: null,
        });
      } finally {
        await inbox.close();
        await handlerPool.end();
        await ferryPool.end();
      }
    },
  );
});
