/**
 * Review 83: the spec's `worker.concurrency` is the "maximum claimed active records", and every
 * claimed receipt is kept alive by lease renewal ("renewals every heartbeatIntervalMs": the poll
 * loop's local queue renews the leases of claims waiting for a lane). Two runOnce() calls at once
 * (an application's explicit bounded execution, e.g. a cron tick overlapping a slow one) each read
 * the free lanes before either has dispatched (InboxWorker.runBatch: `this.free()` before the
 * claim), so each claims `concurrency` receipts: twice the bound is claimed. The surplus waits in
 * the concurrency limit (InboxWorker.dispatch → limit()) with no lease renewal at all: startLease
 * only begins in processReceipt, when a lane frees. A handler longer than the lease (normal: the
 * lease is renewed every heartbeat) lets the waiting claim expire; when its lane frees, its
 * handler never runs (lease-lost), its attempt is spent, and with its budget gone the sweep makes
 * it DEAD ("attempts exhausted: the last claim expired without completing") although no handler
 * ever ran or failed for it.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { latch, makeInbox, message, receiptRow, recorder, waitFor } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('two concurrent runOnce() calls claim no more than `concurrency` receipts, and no claim expires unrenewed waiting for a lane', async () => {
  const slow = latch();
  const started: string[] = [];
  const { events, observer } = recorder();
  const inbox = makeInbox(t.prisma, {
    observer,
    // A lease of 2 s (renewed every 100 ms): long enough for a busy machine to renew the running
    // handler in time, short enough to expire within the 5 s wait below when nothing renews it.
    worker: { concurrency: 1, maxAttempts: 1, leaseMs: 2_000, heartbeatIntervalMs: 100 },
    handlers: {
      orders: async (_payload, context) => {
        started.push(context.receiptId);
        // The first handler outlives the lease (its own lease is renewed meanwhile).
        if (started.length === 1) await slow.promise;
      },
    },
  });
  const first = await inbox.accept(message());
  const second = await inbox.accept(message());
  let settledRuns = 0;
  const runs = [inbox.runOnce(), inbox.runOnce()].map((run) => run.finally(() => void (settledRuns += 1)));
  await waitFor('a handler to start', async () => started.length === 1);

  // Wait until the other receipt is claimed and its lease has expired on the database clock (as
  // now), or a runOnce() has settled while the first handler still runs (one that claimed
  // nothing); a fixed worker may also do neither, so the deadline is tolerated.
  const waiting = started[0] === first.record.id ? second.record.id : first.record.id;
  let mostProcessing = 0;
  await waitFor(
    'the waiting receipt lease to expire, or a runOnce() to settle',
    async () => {
      const [count] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE status = 'PROCESSING'`,
      );
      mostProcessing = Math.max(mostProcessing, count?.n ?? 0);
      const [row] = await t.db.query<{ expired: boolean | null; status: string }>(
        `SELECT status, lease_expires_at <= now() AS expired FROM ferry_inbox_receipts WHERE id = $1::uuid`,
        [waiting],
      );
      return (row?.status === 'PROCESSING' && row.expired === true) || settledRuns > 0;
    },
    5_000,
  ).catch(() => undefined);
  slow.open();
  await Promise.all(runs);
  // Whatever is left is processed (the sweep and a claim run first in runOnce).
  await inbox.runOnce();
  await inbox.runOnce();

  const row = await receiptRow(t, waiting);
  const deadEvents = events.filter((event) => event.type === 'dead');
  // Received: 2 PROCESSING at once, the waiting receipt's handler never ran, and it is DEAD (exhausted).
  expect({
    mostProcessing,
    waitingHandlerRan: started.includes(waiting),
    waitingStatus: row.status,
    dead: deadEvents.length,
  }).toEqual({ mostProcessing: 1, waitingHandlerRan: true, waitingStatus: 'COMPLETED', dead: 0 });
});
