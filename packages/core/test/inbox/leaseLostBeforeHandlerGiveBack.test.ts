/**
 * A claim whose lease is lost while its handler transaction still waits for a session of the
 * application's pool (busy), before its handler started: the claim goes back at once (releaseClaims,
 * fenced by its claim token alone), its attempt returned, not once the transaction unwinds.
 *
 * What happened on main: the give-back waited for the transaction, which waited for a session (up
 * to transactionMaxWaitMs), began, and only then found its lease lost: meanwhile the claim was
 * held, unrun, by a worker that had let it go; on a slow database the lease ran out there first
 * and the give-back came too late to keep the attempt uncharged (the slow-database fault scenario).
 *
 * Either loss: a renewal that finds the lease run out on the database (nobody claimed it since),
 * or the lease counted lost locally, its renewals unanswered. The handler never runs for the lost
 * claim: its transaction, once lent a session, checks the lease before it.
 */
import type { InboxEvent } from '@ferry/core';
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

/** One lane; the retry backoff 1 ms (a claim given back is due again at once). */
const WORKER = {
  concurrency: 1,
  leaseMs: 2_000,
  heartbeatIntervalMs: 200,
  retryBaseMs: 1,
  retryMaxMs: 1,
  // Far beyond the test's wait for the give-back: the session is lent only once it came.
  transactionMaxWaitMs: 50_000,
  transactionTimeoutMs: 55_000,
} as const;

it.each([
  ['a renewal finds its lease run out on the database', 'expired-there'],
  ['its renewals go unanswered past its local expiry', 'unanswered'],
] as const)('%s while its transaction waits for a session: given back at once', async (_case, loss) => {
  const app = await busyApplicationPool(t);
  const consumer = `given-back-${loss}`;
  const ran: string[] = [];
  const events: InboxEvent[] = [];
  const unanswered: Array<(owned: boolean) => void> = [];
  try {
    const inbox = makeInbox(
      app.adapter,
      {
        worker: WORKER,
        handlers: {
          [consumer]: async (_payload: unknown, context: { receiptId: string }) =>
            void ran.push(context.receiptId),
        } as never,
        observer: (event: InboxEvent) => void events.push(event),
      },
      loss === 'unanswered'
        ? { ops: { renew: () => new Promise<boolean>((resolve) => unanswered.push(resolve)) } }
        : {},
    );
    const { record } = await inbox.accept(message({ consumer }));
    const pass = inbox.runOnce();
    await claimTokenOnceClaimed(t, record.id);
    if (loss === 'expired-there') await expireLease(t, record.id);
    // The session is still lent to the test: the transaction has not begun.
    const givenBack = await waitFor(
      'the claim given back while its transaction waits for a session',
      async () => {
        const row = await receiptRow(t, record.id);
        return row.status !== 'PROCESSING' ? row : undefined;
      },
      20_000,
    );
    expect({
      status: givenBack.status,
      attempts: givenBack.attempts,
      lifetime: givenBack.lifetime_attempts,
    }).toEqual({
      status: 'PENDING',
      attempts: 0,
      lifetime: 0,
    });
    app.free();
    const first = await pass;
    expect({ ran, leaseLost: first.leaseLost, unresolved: first.unresolved }).toEqual({
      ran: [],
      leaseLost: 0,
      unresolved: 1,
    });
    expect(events.filter((event) => event.type === 'lease-lost' || event.type === 'retry')).toEqual([]);
    for (const answer of unanswered.splice(0)) answer(true);
    await waitFor('the receipt due again', async () => {
      const second = await inbox.runOnce();
      return second.completed === 1;
    });
    expect(ran).toEqual([record.id]);
    expect(await receiptRow(t, record.id)).toMatchObject({
      status: 'COMPLETED',
      attempts: 1,
      lifetime_attempts: 1,
    });
    await inbox.close();
  } finally {
    for (const answer of unanswered.splice(0)) answer(false);
    app.free();
    await app.end();
  }
});

/**
 * Review 157: a claim given back at once so keeps its lane until its transaction unwinds. Freed at
 * the give-back, the lane took the next claim, whose transaction asked the same busy pool for a
 * second session: more handler transactions than `concurrency`, each holding (or queueing for) one
 * of the application's connections, on exactly the pool that was already short of them.
 */
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
      worker: WORKER,
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
