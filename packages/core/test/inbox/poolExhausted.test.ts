/**
 * A node-postgres pool that has no connection for a handler transaction within
 * transactionMaxWaitMs: that receipt is retried with a typed error (FERRY_DATABASE_UNAVAILABLE),
 * the transaction that gets a connection later rolls back at once, and nothing of it is written.
 */
import { Pool } from 'pg';
import { pgTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow, waitFor } from './helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  // One connection for two lanes.
  pool = new Pool({ connectionString: t.url, max: 1 });
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

describe('a handler transaction that finds no pooled connection (node-postgres)', () => {
  it('is retried with FERRY_DATABASE_UNAVAILABLE after transactionMaxWaitMs, writing nothing; its neighbour completes', async () => {
    const ran: string[] = [];
    const inbox = makeInbox(pgTransactions(pool), {
      worker: {
        concurrency: 2,
        transactionMaxWaitMs: 50,
        // No heartbeat while the test runs: only the two transactions and the failure path queue.
        leaseMs: 60_000,
        heartbeatIntervalMs: 10_000,
      },
      handlers: {
        starved: async (_payload, context) => {
          ran.push(context.receiptId);
          await context.tx.query(INSERT, [context.receiptId, `attempt ${context.attempt}`]);
          // Hold the only connection until the other transaction gave up and its failure path
          // (the claim state read) waits for the connection in turn.
          if (ran.length > 1) return;
          await waitFor('the other transaction to give up', async () => pool.waitingCount >= 2).catch(
            () => undefined,
          );
        },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) ids.push((await inbox.accept(message({ consumer: 'starved' }))).record.id);
    expect(await inbox.runOnce()).toMatchObject({ claimed: 2, completed: 1, retried: 1 });
    expect(ran).toHaveLength(1);
    const [done] = ran;
    const starved = ids.find((id) => id !== done)!;
    expect(await receiptRow(t, done!)).toMatchObject({ status: 'COMPLETED' });
    const row = await receiptRow(t, starved);
    expect(row).toMatchObject({ status: 'RETRYABLE', attempts: 1 });
    expect(row.last_error).toContain('FERRY_DATABASE_UNAVAILABLE');
    expect(await businessCount(t, starved)).toBe(0);
    expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(await businessCount(t, starved)).toBe(1);
    expect(pool.totalCount).toBeLessThanOrEqual(1);
    const idle = await pool.connect();
    try {
      expect(idle.getTransactionStatus()).toBe('I');
    } finally {
      idle.release();
    }
  }, 60_000);
});
