/**
 * A worker whose claim fails waits its poll interval before claiming again, whatever acceptances
 * notify meanwhile: each acceptance wakes a listening worker (worker.listenUrl), and before, a
 * failing claim was retried, and reported, once per accepted message (review 45 found the relay's
 * error back-off cut short the same way).
 */
import { FerryError } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { makeInbox, message } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('keeps its poll interval after a failed claim while acceptances notify it', async () => {
  let claims = 0;
  const errors: string[] = [];
  const worker = makeInbox(
    t.prisma,
    {
      worker: { pollIntervalMs: 1_000, listenUrl: t.url },
      handlers: { orders: async () => undefined },
      observer: (event) => void (event.type === 'infrastructure-error' && errors.push(event.operation)),
    },
    {
      ops: {
        claim: async () => {
          claims += 1;
          throw new FerryError('FERRY_DATABASE_UNAVAILABLE', 'Connection terminated unexpectedly');
        },
      },
    },
  );
  const acceptor = makeInbox(t.prisma, { handlers: { orders: async () => undefined } });
  worker.start();
  try {
    const until = Date.now() + 2_500;
    while (Date.now() < until) {
      await acceptor.accept(message());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await worker.close();
  }
  // Claims at about 0 s, 1 s and 2 s; one more allowed (the LISTEN connect's wake-up).
  expect(claims).toBeGreaterThanOrEqual(1);
  expect(claims).toBeLessThanOrEqual(4);
  expect(errors.filter((operation) => operation === 'claim').length).toBe(claims);
}, 20_000);
