/**
 * Review 152: a renewal of the worker's queued claims that the lease kit gave up on may answer
 * late (on Prisma it runs on until PostgreSQL answers), and its answer now reaches the claim
 * queue. After close() gave the queued claims back, that late answer finds none of them held any
 * more: it must not report them lease-lost (they were given back, not lost), nor report anything
 * once close() resolved.
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { holdRenewals, RENEWAL_TEXT } from '../../../../test-support/heldRenewals';
import { latch, makeInbox, message, recorder, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('a late renewal of queued claims that close() gave back', () => {
  it('reports no lease-lost for them, before or after close() resolved', async () => {
    const holds = await holdRenewals(t.db, 'ferry_inbox_receipts', 'all');
    const started = latch();
    let running: string | undefined;
    const { events, observer } = recorder();
    const inbox = makeInbox(t.newClient({ max: 12 }), {
      statementTimeoutMs: 60_000,
      observer,
      worker: {
        concurrency: 1,
        prefetch: 4,
        leaseMs: 6_000,
        heartbeatIntervalMs: 300,
        transactionTimeoutMs: 60_000,
        shutdownTimeoutMs: 100,
      },
      handlers: {
        queued: async (_payload, context) => {
          running = context.receiptId;
          started.open();
          await new Promise<void>((resolve) =>
            context.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          throw context.signal.reason;
        },
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1) ids.push((await inbox.accept(message({ consumer: 'queued' }))).record.id);
    try {
      inbox.start();
      await started.promise;
      // The running claim's renewals and the queue's: two of each held, both given up on.
      await waitFor('two renewals of each lease held', async () => (await holds.held()) >= 4, 30_000);
      await inbox.close();
      const atClose = events.length;
      await holds.release();
      // The late answers have left the server (no renewal statement runs): their reactions come
      // within a moment of their answer.
      await waitFor('no renewal statement running', async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'active' AND strpos(query, $1) > 0`,
          [RENEWAL_TEXT],
        );
        return row?.n === 0;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(events.slice(atClose)).toEqual([]);
      expect(events.filter((event) => event.type === 'lease-lost')).toEqual([]);
      // The queued three were given back by close().
      const rows = await t.db.query<{ status: string }>(
        'SELECT status FROM ferry_inbox_receipts WHERE id = ANY($1::uuid[])',
        [ids.filter((id) => id !== running)],
      );
      expect(rows.map((row) => row.status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    } finally {
      await holds.release();
    }
  });
});
