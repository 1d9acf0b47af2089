/**
 * Review 87 (inbox worker, runOnce() lane reservation), failing on main.
 *
 * What I did: a started worker (concurrency 1, prefetch 1) and a runOnce() whose claim is in
 * flight while the poll loop claims: runOnce() reserved the one lane, so the poll loop's claim
 * waits in its renewed queue (review 83). Then runOnce()'s claim comes back empty (the poll loop
 * took the only receipt), or fails (the database refused it).
 *
 * What happened: runOnce() gave its lane back without starting the queued receipt; nothing else
 * starts one while no handler runs (pump() runs when a handler ends or the poll loop claims, and the
 * poll loop claims nothing while its queue is full). The queued receipt stayed PROCESSING, its
 * lease renewed for ever, its handler never run: the worker stalled until close().
 *
 * What should happen: a lane given back starts what waits for it; the queued receipt runs.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { claimReceipts } from '../src/inbox/sql/claim';
import { latch, makeInbox, message, receiptRow, waitFor } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const WORKER = { concurrency: 1, prefetch: 1, leaseMs: 3_000, heartbeatIntervalMs: 100 };

it.each([
  ['finds nothing', 'lane-empty', false],
  ['fails', 'lane-failed', true],
])(
  'a queued receipt runs when the claim of a runOnce() holding the lane %s',
  async (_name, consumer, fail) => {
    const answer = latch();
    let claims = 0;
    const ran: string[] = [];
    const inbox = makeInbox(
      t.prisma,
      {
        worker: WORKER,
        handlers: { [consumer]: async (_payload, context) => void ran.push(context.receiptId) },
      },
      {
        ops: {
          claim: async (limit) => {
            claims += 1;
            // runOnce()'s claim (the first) is sent only once the poll loop has claimed.
            if (claims === 1) {
              await answer.promise;
              if (fail) throw new Error('the database refused the claim');
            }
            return claimReceipts(t.db, [consumer], limit, WORKER.leaseMs, 8);
          },
        },
      },
    );
    const { record } = await inbox.accept(message({ consumer }));
    const run = inbox.runOnce();
    await waitFor("runOnce()'s claim", async () => claims === 1);
    inbox.start();
    await waitFor(
      "the poll loop's claim",
      async () => (await receiptRow(t, record.id)).status === 'PROCESSING',
    );
    answer.open();
    const result = await run.then(
      (value) => value.claimed,
      (error: unknown) => String(error),
    );
    expect(result).toEqual(fail ? 'Error: the database refused the claim' : 0);
    await waitFor('the queued receipt to run', async () => ran.includes(record.id));
    await waitFor('it to complete', async () => (await receiptRow(t, record.id)).status === 'COMPLETED');
  },
);
