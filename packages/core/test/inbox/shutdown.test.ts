import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  insertBusiness,
  latch,
  makeInbox,
  message,
  receiptRow,
  waitFor,
} from './helpers';

describe('inbox close() and runOnce()', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  /** Holds an ACCESS EXCLUSIVE lock on the receipts table, so every worker query waits on it. */
  async function lockReceipts(): Promise<{ release: () => Promise<void> }> {
    const client = listened(new Client({ connectionString: t.url }));
    await client.connect();
    await client.query('BEGIN');
    await client.query('LOCK TABLE ferry_inbox_receipts IN ACCESS EXCLUSIVE MODE');
    return {
      release: async () => {
        await client.query('COMMIT');
        await client.end();
      },
    };
  }

  async function waitUntilBlocked(): Promise<void> {
    await waitFor('a worker query waiting on the table lock', async () => {
      const [row] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%ferry_inbox_receipts%'`,
      );
      return (row?.n ?? 0) > 0;
    });
  }

  it('does not return from close() while runOnce() is still claiming, and drains what it claimed', async () => {
    const order: string[] = [];
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 30_000 },
      handlers: {
        'c-claiming': async (_p, context) => {
          await insertBusiness(context);
          order.push('handler');
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-claiming' }));
    const lock = await lockReceipts();
    const run = inbox.runOnce();
    await waitUntilBlocked();
    const closed = inbox.close().then(() => order.push('closed'));
    await lock.release();
    await closed;
    expect(order).toEqual(['handler', 'closed']);
    expect(await run).toMatchObject({ claimed: 1, completed: 1 });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(await businessCount(t, record.id)).toBe(1);
  });

  it('after shutdownTimeoutMs waits for a claim still in flight and gives back what it claimed, never running its handler', async () => {
    let calls = 0;
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 100, leaseMs: 1_000, heartbeatIntervalMs: 100 },
      handlers: {
        'c-abandon': async () => {
          calls += 1;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-abandon' }));
    const lock = await lockReceipts();
    const run = inbox.runOnce();
    await waitUntilBlocked();
    const closing = inbox.close();
    // close() gave up waiting (its handlers would be interrupted), but waits for the claim in flight.
    await waitFor('shutdownTimeoutMs to pass', async () => inbox.state === 'closed');
    await lock.release();
    await closing;
    // Given back before close() returned: due again, its attempt returned (review 87).
    expect(await receiptRow(t, record.id)).toMatchObject({
      status: 'PENDING',
      attempts: 0,
      lease_expires_at: null,
    });
    expect(await run).toMatchObject({ claimed: 1, completed: 0, unresolved: 1 });
    expect(calls).toBe(0);
    const recovery = makeInbox(t.newClient(), {
      handlers: { 'c-abandon': async (_p, c) => insertBusiness(c) },
    });
    expect(await recovery.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
    expect(calls).toBe(0);
  });

  it('writes no failure transition for a handler that gave up on the shutdown signal after close() returned', async () => {
    const started = latch();
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 100, leaseMs: 1_000, heartbeatIntervalMs: 100 },
      handlers: {
        'c-cooperative': async (_p, context) => {
          started.open();
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
          throw context.signal.reason;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'c-cooperative' }));
    const run = inbox.runOnce();
    await started.promise;
    await inbox.close();
    expect(await run).toMatchObject({ claimed: 1, retried: 0, unresolved: 1 });
    expect(await receiptRow(t, record.id)).toMatchObject({
      status: 'PROCESSING',
      attempts: 1,
      last_error: null,
    });
  });
});
