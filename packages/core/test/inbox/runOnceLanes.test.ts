/**
 * Every claim a worker holds is either running (its own lease renewed by processReceipt) or
 * waiting in the poll loop's queue (renewed by ClaimQueue): never waiting for a lane unrenewed.
 * runOnce() reserves its lanes before its claim is sent, so the poll loop's receipts, claimed
 * while that claim is in flight, stay in the renewed queue instead of taking the lane (review 83).
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { claimReceipts } from '../../src/inbox/sql/claim';
import { latch, makeInbox, message, receiptRow, recorder, waitFor } from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

// A lease long enough to be renewed on a busy machine (renewals every 100 ms, 3 s to succeed).
const WORKER = { concurrency: 1, prefetch: 1, maxAttempts: 1, leaseMs: 3_000, heartbeatIntervalMs: 100 };

it("the poll loop's claim never takes the lane of a runOnce() claim in flight", async () => {
  const answer = latch();
  const slow = latch();
  const started: string[] = [];
  let claims = 0;
  const { events, observer } = recorder();
  const inbox = makeInbox(
    t.prisma,
    {
      observer,
      worker: WORKER,
      handlers: {
        orders: async (_payload, context) => {
          started.push(context.receiptId);
          if (started.length === 1) await slow.promise;
        },
      },
    },
    {
      ops: {
        claim: async (limit) => {
          claims += 1;
          const claimed = await claimReceipts(t.db, ['orders'], limit, WORKER.leaseMs, WORKER.maxAttempts);
          // runOnce()'s claim (the first) answers only once the poll loop has claimed.
          if (claims === 1) await answer.promise;
          return claimed;
        },
      },
    },
  );
  const a = await inbox.accept(message());
  const b = await inbox.accept(message());
  const run = inbox.runOnce();
  await waitFor("runOnce()'s claim", async () => claims === 1);
  inbox.start();
  await waitFor("the poll loop's claim to take the other receipt", async () => {
    const rows = await Promise.all([receiptRow(t, a.record.id), receiptRow(t, b.record.id)]);
    return rows.every((row) => row.status === 'PROCESSING');
  });
  answer.open();
  await waitFor('a handler to start', async () => started.length === 1);
  const waiting = started[0] === a.record.id ? b.record.id : a.record.id;

  // Past the waiting receipt's first lease on the database clock: it is renewed, or lost.
  const first = (await receiptRow(t, waiting)).lease_expires_at as Date;
  await waitFor('its first lease to pass', async () => {
    const [row] = await t.db.query<{ past: boolean }>('SELECT now() > $1::timestamptz AS past', [first]);
    return row?.past === true;
  });
  const [lease] = await t.db.query<{ live: boolean }>(
    'SELECT lease_expires_at > now() AS live FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [waiting],
  );
  slow.open();
  await run;
  await waitFor(
    'the waiting receipt to run, or be lost',
    async () => started.length === 2 || events.some((event) => event.type === 'lease-lost'),
  );
  await inbox.close();
  const statuses = await Promise.all([receiptRow(t, a.record.id), receiptRow(t, b.record.id)]);
  expect({
    renewed: lease?.live,
    statuses: statuses.map((row) => row.status),
    lost: events.filter((event) => event.type === 'lease-lost' || event.type === 'dead').length,
  }).toEqual({ renewed: true, statuses: ['COMPLETED', 'COMPLETED'], lost: 0 });
});
