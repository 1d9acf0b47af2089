/**
 * A queued claim handed to a lane while a renewal of the queue's batch is in flight (sent with the
 * claim still waiting) and answers late, as on a slow database (fault-tests/operations/
 * slow-database). That renewal extended the claim's lease on the database from its send time;
 * once it answers the claim owned, the lane's lease is proven from that send time too.
 *
 * What happened on main: the lane's lease started from the queue lease's last proof
 * (ClaimQueue.take(): provenAt, here the claim itself) and the queue renewal's answer was not
 * credited to it, so with the lane's own renewals slow the lease was counted lost locally about
 * two heartbeat intervals before the database would let it run out: the handler's signal aborted,
 * the receipt lease-lost though the database still held it for the worker.
 *
 * The test runs the real statements; only their answers are held (the queue's renewals until the
 * claim is in its lane, the lane's own renewals of that claim until the end). The check comes at
 * a time between the two local expiries (by the lease arithmetic: a timer, ordered with the kit's).
 */
import type { ClaimedReceipt, InboxEvent } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { renewLease } from '../../src/inbox/sql/renewLease';
import { renewQueued } from '../../src/inbox/sql/renewQueued';
import { latch, makeInbox, message, receiptRow, recorder, waitFor } from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const LEASE = { leaseMs: 6_000, heartbeatIntervalMs: 1_000 } as const;

it("credits the queue renewal in flight at the handoff to the lane's lease", async () => {
  const consumer = 'handoff';
  const queueAnswers = latch();
  const laneAnswers = latch();
  const secondQueueRenewal = latch();
  /** performance.now() when each queue renewal was sent (its statement goes at once). */
  const queueRenewalsSentAt: number[] = [];
  const started: string[] = [];
  const firstDone = latch();
  const checkpoint = latch();
  let abortedAtCheckpoint: boolean | undefined;
  let second: string | undefined;
  const { events, observer } = recorder();
  const inbox = makeInbox(
    t.prisma,
    {
      observer,
      worker: { concurrency: 1, prefetch: 1, ...LEASE, transactionTimeoutMs: 30_000 },
      handlers: {
        [consumer]: async (_payload, context) => {
          started.push(context.receiptId);
          if (started.length === 1) {
            // The lane stays busy until the queue has two renewals of the waiting claim in flight.
            await secondQueueRenewal.promise;
            firstDone.open();
            return;
          }
          second = context.receiptId;
          // Both queue renewals answer now, the claim owned: the later one was sent after the
          // queue lease's last proof and is still in flight at the handoff.
          queueAnswers.open();
          await checkpoint.promise;
          // Its first run only (on main it ran again, as a retry of the lease lost).
          abortedAtCheckpoint ??= context.signal.aborted;
        },
      },
    },
    {
      ops: {
        renewQueued: async (receipts) => {
          queueRenewalsSentAt.push(performance.now());
          const owned = await renewQueued(t.db, receipts, LEASE);
          if (queueRenewalsSentAt.length === 2) secondQueueRenewal.open();
          await queueAnswers.promise;
          return owned;
        },
        renew: async (receipt: ClaimedReceipt) => {
          const owned = await renewLease(t.db, receipt.id, receipt.claimToken, LEASE);
          // The lane's own renewals of the queued claim answer only at the end: a slow database.
          if (started.length > 0 && receipt.id !== started[0]) await laneAnswers.promise;
          return owned;
        },
      },
    },
  );
  const ids = [
    (await inbox.accept(message({ consumer }))).record.id,
    (await inbox.accept(message({ consumer }))).record.id,
  ];
  try {
    inbox.start();
    await firstDone.promise;
    await waitFor('the queued claim to start in its lane', async () => second !== undefined);
    // Half an interval before the lease proven by the second queue renewal counts as lost locally,
    // and more than one interval after the lease proven by the claim alone (the queue lease's
    // last proof at the handoff) did.
    const sentAt = queueRenewalsSentAt[1]!;
    const at = sentAt + LEASE.leaseMs - LEASE.heartbeatIntervalMs - LEASE.heartbeatIntervalMs / 2;
    setTimeout(() => checkpoint.open(), Math.max(0, at - performance.now()));
    await checkpoint.promise;
    await waitFor('the second receipt to settle', async () => {
      const row = await receiptRow(t, second!);
      return (
        row.status === 'COMPLETED' || events.some((e) => e.type === 'lease-lost' && e.receiptId === second)
      );
    });
    const lost = events.filter((e: InboxEvent) => e.type === 'lease-lost' || e.type === 'retry');
    expect({
      abortedAtCheckpoint,
      lost,
      rows: await Promise.all(
        ids.map(async (id) => {
          const row = await receiptRow(t, id);
          return { status: row.status, lifetime: row.lifetime_attempts };
        }),
      ),
    }).toEqual({
      abortedAtCheckpoint: false,
      lost: [],
      rows: [
        { status: 'COMPLETED', lifetime: 1 },
        { status: 'COMPLETED', lifetime: 1 },
      ],
    });
  } finally {
    queueAnswers.open();
    laneAnswers.open();
    checkpoint.open();
    await inbox.close();
  }
});
