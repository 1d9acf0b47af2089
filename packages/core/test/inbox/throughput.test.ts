import { fromPrisma, type InboxHandlerContext } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, waitFor } from './helpers';

// A correctness test (every message once, under four competing workers); throughput lives in bench/.
// 400: every one of the 16 lanes (4 workers x concurrency 4, a claim takes at most a worker's free
// lanes) claims about 25 times over, the four workers racing for the same rows throughout (2,000
// took up to 190 s of a loaded CI run, and 800 more CPU, for no more contention).
const TOTAL = 400;

describe('inbox throughput', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  it('processes 400 accepted messages with 4 concurrent workers into exactly 400 business rows', async () => {
    const handler = async (payload: Readonly<Record<string, unknown>>, context: InboxHandlerContext) => {
      await fromPrisma(context.tx).execute(
        'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)',
        [context.receiptId, String(payload.n)],
      );
    };
    const workers = Array.from({ length: 4 }, () =>
      makeInbox(t.newClient({ max: 6 }), {
        handlers: { bulk: handler },
        // Leases long enough that no lane renews during a handler: FAST_WORKER's 200 ms
        // heartbeat had every busy lane renew once per handler on a loaded machine, a statement
        // per message that slowed the run the more the machine was loaded (80 s in one CI run).
        worker: { concurrency: 4, pollIntervalMs: 50, leaseMs: 10_000, heartbeatIntervalMs: 2_000 },
      }),
    );
    const acceptStart = Date.now();
    for (let offset = 0; offset < TOTAL; offset += 400) {
      const batch = Array.from({ length: 400 }, (_, i) =>
        message({ consumer: 'bulk', payload: { n: offset + i } }),
      );
      const results = await workers[0]!.acceptMany(batch);
      expect(results.every((r) => r.kind === 'accepted')).toBe(true);
    }
    const acceptMs = Date.now() - acceptStart;
    const start = Date.now();
    workers.forEach((w) => w.start());
    await waitFor(
      'every receipt completed',
      async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status <> 'COMPLETED'`,
        );
        return row?.n === 0;
      },
      600_000,
    );
    const processMs = Date.now() - start;
    await Promise.all(workers.map((w) => w.close()));
    const rows = await businessCount(t);
    const [distinct] = await t.db.query<{ n: number }>(
      'SELECT count(DISTINCT receipt_id)::int AS n FROM business_rows',
    );
    console.log(
      `inbox throughput: accepted ${TOTAL} in ${acceptMs} ms; 4 workers x concurrency 4 processed them in ${processMs} ms ` +
        `(${Math.round((TOTAL / processMs) * 1000)}/s); business rows = ${rows}, distinct receipts = ${distinct?.n}`,
    );
    expect(rows).toBe(TOTAL);
    expect(distinct?.n).toBe(TOTAL);
  }, 900_000);
});
