/**
 * A node-postgres pool that has no connection for a handler transaction within
 * transactionMaxWaitMs: that receipt's handler never ran, so its claim is given back with its
 * attempt (review 103: it was a retry with the attempt spent, FERRY_DATABASE_UNAVAILABLE), an
 * infrastructure-error observed; the transaction that gets a connection later rolls back at
 * once, and nothing of it is written.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  makeInbox,
  message,
  receiptRow,
  recorder,
  waitFor,
} from './helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  // One connection for two lanes.
  pool = listened(new Pool({ connectionString: t.url, max: 1 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

describe('a handler transaction that finds no pooled connection (node-postgres)', () => {
  it('is given back, its attempt returned, after transactionMaxWaitMs, writing nothing; its neighbour completes', async () => {
    const ran: string[] = [];
    const { events, observer } = recorder();
    const inbox = makeInbox(pgTransactions(pool), {
      observer,
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
    expect(await inbox.runOnce()).toMatchObject({ claimed: 2, completed: 1, retried: 0, unresolved: 1 });
    expect(ran).toHaveLength(1);
    const [done] = ran;
    const starved = ids.find((id) => id !== done)!;
    expect(await receiptRow(t, done!)).toMatchObject({ status: 'COMPLETED' });
    const row = await receiptRow(t, starved);
    expect(row).toMatchObject({ status: 'PENDING', attempts: 0, last_error: null });
    const seen = events.find((e) => e.type === 'infrastructure-error');
    expect(seen).toMatchObject({ operation: 'handler-transaction' });
    expect(JSON.stringify(seen)).toContain('FERRY_DATABASE_UNAVAILABLE');
    expect(await businessCount(t, starved)).toBe(0);
    // Due again after the retry backoff of its attempt.
    await waitFor('the given-back receipt to be due', async () => {
      const [due] = await t.prisma.$queryRawUnsafe<{ due: boolean }[]>(
        'SELECT next_attempt_at <= now() AS due FROM ferry_inbox_receipts WHERE id = $1::uuid',
        starved,
      );
      return due?.due === true;
    });
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
