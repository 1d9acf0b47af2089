/**
 * Review 93: a lease renewal that misses its deadline (a lock another session holds on the receipt
 * row) is abandoned by the lease kit, which sends the next one an interval later. The statement it
 * gave up on must end with it: left running until statementTimeoutMs, every heartbeat added one
 * more statement waiting on the same lock, each holding a connection of the application's pool,
 * for the handler's lease and for every batch of queued claims alike.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { lockRows, mostWaitingOnLock, RENEWALS_WAITING_AT_MOST } from '../../../../test-support/rowLocks';
import { latch, makeInbox, message, waitFor } from './helpers';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 20 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

/** The text of the renewal statements (renewLease, renewQueued). */
const RENEWAL = 'SET lease_expires_at = now()';

const WORKER = {
  leaseMs: 4_000,
  heartbeatIntervalMs: 250,
  transactionTimeoutMs: 60_000,
  shutdownTimeoutMs: 0,
} as const;

describe('a lease renewal that misses its deadline ends its statement', () => {
  it("the handler's lease: renewals do not stack on a lock held by another session", async () => {
    const started = latch();
    let aborted = false;
    const inbox = makeInbox(pgTransactions(pool), {
      worker: WORKER,
      handlers: {
        held: async (_payload, context) => {
          started.open();
          await new Promise<void>((resolve) =>
            context.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          aborted = true;
          throw context.signal.reason;
        },
      },
    });
    const { record } = await inbox.accept(message({ consumer: 'held' }));
    const run = inbox.runOnce();
    await started.promise;
    const lock = await lockRows(t.url, 'ferry_inbox_receipts', [record.id]);
    try {
      expect(await mostWaitingOnLock(t.db, RENEWAL, () => aborted)).toBeLessThanOrEqual(
        RENEWALS_WAITING_AT_MOST,
      );
    } finally {
      await lock.end();
    }
    await run;
  });

  it('a batch of queued claims: renewals do not stack on a lock held by another session', async () => {
    const started = latch();
    const finish = latch();
    const inbox = makeInbox(pgTransactions(pool), {
      worker: { ...WORKER, concurrency: 1, prefetch: 2 },
      handlers: {
        first: async () => {
          started.open();
          await finish.promise;
        },
        queued: async () => undefined,
      },
    });
    const first = await inbox.accept(message({ consumer: 'first' }));
    const queued = [
      await inbox.accept(message({ consumer: 'queued' })),
      await inbox.accept(message({ consumer: 'queued' })),
    ];
    // The first receipt is due first: it starts, the other two wait in the queue.
    await t.db.execute(
      "UPDATE ferry_inbox_receipts SET next_attempt_at = now() - interval '1 minute' WHERE id = $1::uuid",
      [first.record.id],
    );
    inbox.start();
    await started.promise;
    const [row] = await t.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM ferry_inbox_receipts WHERE consumer = 'queued' AND status = 'PROCESSING'",
    );
    expect(Number(row?.n)).toBe(2);
    const lock = await lockRows(
      t.url,
      'ferry_inbox_receipts',
      queued.map((q) => q.record.id),
    );
    let lost = false;
    void waitFor(
      'the queued claims to count as lost',
      async () => {
        const [state] = await t.db.query<{ n: string }>(
          "SELECT count(*) AS n FROM ferry_inbox_receipts WHERE consumer = 'queued' AND lease_expires_at < now()",
        );
        return Number(state?.n) === 2 || undefined;
      },
      30_000,
    ).finally(() => {
      lost = true;
    });
    try {
      expect(await mostWaitingOnLock(t.db, RENEWAL, () => lost)).toBeLessThanOrEqual(
        RENEWALS_WAITING_AT_MOST,
      );
    } finally {
      await lock.end();
      finish.open();
    }
    await inbox.close();
  });
});
