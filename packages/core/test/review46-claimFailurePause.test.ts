/**
 * Review 46: one failed claim makes a listening inbox worker deaf for a whole poll interval.
 *
 * What I did: an inbox worker with `worker.listenUrl` (acceptance wakes it, docs/inbox.md "an idle
 * worker polls at once instead of after pollIntervalMs") and, as LISTEN allows, a long
 * `pollIntervalMs` (30 s; the bound is an hour). Its first claim fails once, transiently (a
 * FERRY_DATABASE_UNAVAILABLE: a failover blip, a pool briefly dry); every later claim works.
 * Half a second later a message is accepted, which notifies the worker.
 *
 * What happened: since review 45 (worker.ts) a failed claim is followed by
 * `wake.pause(pollIntervalMs)`, which no notification ends: the worker waits the whole 30 s
 * before its next claim, with the message accepted and the database answering all along. Before,
 * the acceptance woke it at once. The back-off after a failure is the idle poll interval (up to
 * an hour), not an error back-off; the relay's equivalent is `errorBackoff` (1 s, doubling).
 *
 * What should happen: after one transient failure the worker backs off briefly (the relay's
 * default: 1 s) and then handles the message the acceptance announced; certainly not a poll
 * interval of up to an hour later. The test allows 8 s.
 *
 * Fix direction: pause for an error back-off (e.g. min(pollIntervalMs, errorBackoff doubling per
 * consecutive failure, reset by a successful claim)) and keep the notification pending for after it.
 */
import { FerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { claimReceipts } from '../src/inbox/sql/claim';
import { makeInbox, message, waitFor } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('handles an announced message soon after one transient claim failure, not a poll interval later', async () => {
  let claims = 0;
  const handled: string[] = [];
  const worker = makeInbox(
    t.prisma,
    {
      worker: { pollIntervalMs: 30_000, listenUrl: t.url },
      handlers: { orders: async (_payload, context) => void handled.push(context.messageId) },
    },
    {
      ops: {
        claim: async (limit: number) => {
          claims += 1;
          if (claims === 1)
            throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'Connection terminated unexpectedly');
          return claimReceipts(t.db, ['orders'], limit, 2_000, 8);
        },
      },
    },
  );
  const acceptor = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
  worker.start();
  await waitFor('the first claim failed', async () => claims >= 1);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const input = message();
  await acceptor.accept(input);
  // On main: nothing is claimed for 30 s after the failure; this deadline passes first.
  await waitFor('the announced message handled', async () => handled.includes(input.messageId), 8_000);
}, 20_000);
