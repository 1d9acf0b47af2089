/**
 * Review 157: a claim given back at once for a lease lost while its handler transaction waits for
 * a session keeps its lane until that transaction unwinds. Freed at the give-back, the lane took
 * the next claim, whose transaction asked the same busy pool for a second session: more handler
 * transactions than `concurrency`, each holding (or queueing for) one of the application's
 * connections, on exactly the pool that was already short of them.
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  busyApplicationPool,
  claimTokenOnceClaimed,
  expireLease,
  makeInbox,
  message,
  receiptRow,
  waitFor,
} from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('the lane of a claim given back before its handler stays taken until its transaction unwinds', async () => {
  const app = await busyApplicationPool(t);
  const consumer = 'given-back-lane';
  const ran: string[] = [];
  // Handler transactions asked for and not settled, and the most at once.
  let open = 0;
  let mostOpen = 0;
  const adapter = {
    ...app.adapter,
    transaction: ((work, options) => {
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      return app.adapter.transaction(work, options).finally(() => void (open -= 1));
    }) as typeof app.adapter.transaction,
  };
  try {
    const inbox = makeInbox(adapter, {
      worker: {
        concurrency: 1,
        leaseMs: 2_000,
        heartbeatIntervalMs: 200,
        retryBaseMs: 1,
        retryMaxMs: 1,
        // Far beyond the test: the session is lent only once the test frees it.
        transactionMaxWaitMs: 50_000,
        transactionTimeoutMs: 55_000,
      },
      handlers: {
        [consumer]: async (_payload: unknown, context: { receiptId: string }) =>
          void ran.push(context.receiptId),
      } as never,
    });
    const { record } = await inbox.accept(message({ consumer }));
    const first = inbox.runOnce();
    await claimTokenOnceClaimed(t, record.id);
    await expireLease(t, record.id);
    await waitFor(
      'the claim given back while its transaction waits for a session',
      async () => (await receiptRow(t, record.id)).status !== 'PROCESSING',
      20_000,
    );
    // Due again at once (retry backoff 1 ms): a free lane claims and runs it now.
    await waitFor('the receipt due again', async () => {
      const row = await t.db.query<{ due: boolean }>(
        `SELECT next_attempt_at <= now() AS due FROM ferry_inbox_receipts WHERE id = $1::uuid`,
        [record.id],
      );
      return row[0]?.due === true;
    });
    expect(await inbox.runOnce()).toMatchObject({ claimed: 0 });
    expect({ open, mostOpen }).toEqual({ open: 1, mostOpen: 1 });
    app.free();
    expect(await first).toMatchObject({ claimed: 1, unresolved: 1 });
    await waitFor('the receipt run', async () => (await inbox.runOnce()).completed === 1);
    expect(ran).toEqual([record.id]);
    expect(mostOpen).toBe(1);
    await inbox.close();
  } finally {
    app.free();
    await app.end();
  }
});
