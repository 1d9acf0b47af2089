/**
 * Review 87 (inbox worker, runOnce() and close()), failing on main.
 *
 * What I did: worker.maxAttempts 1, a runOnce() whose claim statement is still in flight when
 * close() runs out of shutdownTimeoutMs (a slow database), then the claim returns a receipt.
 *
 * What happened: close() returned at once; the claim then committed after it, spending the
 * receipt's only attempt, and its handler never ran (counted `unresolved`). The receipt stayed
 * PROCESSING until its lease expired, and the next worker's sweep made it DEAD ("attempts
 * exhausted") although no handler had ever seen it. The poll loop's own claim in flight is awaited
 * by close() and what it claimed is given back (its attempt returned): a runOnce() claim was not.
 *
 * What should happen: as the poll loop's: close() waits for a runOnce() claim still in flight
 * (each statement has its deadline) and gives what it claimed back before it returns: PENDING,
 * no lease, attempts 0, so the next worker runs it.
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

const WORKER = { concurrency: 1, maxAttempts: 1, shutdownTimeoutMs: 50, leaseMs: 2_000 };

it('close() gives back what a runOnce() claim in flight claimed after the shutdown timeout; the next worker runs it', async () => {
  const answer = latch();
  let claims = 0;
  let returned: number | undefined;
  const ran: string[] = [];
  const handlers = {
    orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
  };
  const inbox = makeInbox(
    t.prisma,
    { worker: WORKER, handlers },
    {
      ops: {
        claim: async (limit) => {
          claims += 1;
          // The statement is sent only once close() has given up waiting (a slow database).
          await answer.promise;
          const claimed = await claimReceipts(t.db, ['orders'], limit, WORKER.leaseMs, WORKER.maxAttempts);
          returned = claimed.length;
          return claimed;
        },
      },
    },
  );
  const { record } = await inbox.accept(message());
  const run = inbox.runOnce();
  await waitFor("runOnce()'s claim", async () => claims === 1);
  const closing = inbox.close();
  await waitFor('close() to run out of shutdownTimeoutMs', async () => inbox.state === 'closed');
  answer.open();
  await closing;
  // close() returned after the claim did, and after what it claimed was given back.
  const returnedBeforeClose = returned;
  const row = await receiptRow(t, record.id);
  expect({
    returned: returnedBeforeClose,
    status: row.status,
    attempts: row.attempts,
    lease: row.lease_expires_at,
  }).toEqual({
    returned: 1,
    status: 'PENDING',
    attempts: 0,
    lease: null,
  });
  expect(await run).toMatchObject({ claimed: 1, completed: 0, unresolved: 1 });

  const next = makeInbox(t.prisma, { worker: WORKER, handlers });
  await next.runOnce();
  expect(ran).toEqual([record.id]);
  expect((await receiptRow(t, record.id)).status).toBe('COMPLETED');
});
