/**
 * The worker's claim refill at its edges, against the real PostgreSQL: workers with prefetch 0,
 * prefetch 1 and concurrency above prefetch sharing one backlog, and a handler that reads its
 * (lazily made) signal only after the worker interrupted it.
 */
import type { InboxHandlerContext } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { createBusinessTable, insertBusiness, latch, makeInbox, message, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
});
afterAll(async () => {
  await t.drop();
});

describe('inbox worker claim refill, edge cases', () => {
  it('runs every receipt once across workers with prefetch 0, prefetch 1 and concurrency above prefetch', async () => {
    const total = 90;
    const lease = { leaseMs: 60_000, heartbeatIntervalMs: 1_000 };
    const configs = [
      { concurrency: 3, prefetch: 1 },
      { concurrency: 1, prefetch: 0 },
      { concurrency: 2, prefetch: 8 },
    ];
    const runs = configs.map(() => [] as string[]);
    const workers = configs.map((config, index) =>
      makeInbox(t.newClient({ max: 4 }), {
        handlers: {
          edges: async (_p: unknown, context: InboxHandlerContext) => {
            runs[index]!.push(context.receiptId);
            await insertBusiness(context, 'edges');
          },
        },
        worker: { ...config, ...lease },
      }),
    );
    await workers[0]!.acceptMany(Array.from({ length: total }, () => message({ consumer: 'edges' })));
    workers.forEach((worker) => worker.start());
    await waitFor(
      'every receipt completed',
      async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE consumer = 'edges' AND status <> 'COMPLETED'`,
        );
        return row?.n === 0;
      },
      120_000,
    );
    await Promise.all(workers.map((worker) => worker.close()));
    const all = runs.flat();
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);
    const [counts] = await t.db.query<{ rows: number; receipts: number; attempts: number }>(
      `SELECT count(*)::int AS rows, count(DISTINCT b.receipt_id)::int AS receipts,
              max(r.lifetime_attempts)::int AS attempts
       FROM business_rows b JOIN ferry_inbox_receipts r ON r.id = b.receipt_id WHERE b.note = 'edges'`,
    );
    expect(counts).toEqual({ rows: total, receipts: total, attempts: 1 });
    // No worker starved: each ran some of the backlog.
    expect(runs.map((run) => run.length > 0)).toEqual([true, true, true]);
  }, 180_000);

  it('gives a handler that reads its signal only after shutdown interrupted it an aborted signal', async () => {
    const started = latch();
    const resume = latch();
    const seen: Array<{ aborted: boolean; reason: unknown }> = [];
    const inbox = makeInbox(t.prisma, {
      worker: { shutdownTimeoutMs: 50, transactionTimeoutMs: 60_000 },
      handlers: {
        late: async (_p, context) => {
          started.open();
          await resume.promise;
          seen.push({ aborted: context.signal.aborted, reason: context.signal.reason });
        },
      },
    });
    await inbox.accept(message({ consumer: 'late' }));
    const run = inbox.runOnce();
    await started.promise;
    await inbox.close();
    resume.open();
    await run;
    expect(seen).toEqual([{ aborted: true, reason: expect.objectContaining({ code: 'FERRY_CLOSED' }) }]);
  });
});
