/**
 * Review 78: the relay names each publish span after `publisher.destinationName(message)` and
 * reads `publisher.system` for its `messaging.system`, both from a third party's Publisher. The
 * relay guards destinationName ("A publisher's naming never keeps its messages from being
 * published", tracing/messaging.ts) against a sync throw, a throwing getter, a non-string, an
 * empty or overlong string: each publish still succeeds and its row is SENT. Two ways around the
 * guard remain:
 *
 * - a destinationName that returns a rejected Promise (an `async destinationName` in JavaScript,
 *   or a NestJS provider that forwards to an async lookup): the relay drops the promise, its
 *   rejection is unhandled, and Node (unhandled-rejections=throw, the default) ends the process
 *   running the relay;
 * - a `system` getter that throws (read in startPublishSpans outside that guard, which
 *   publishBatch calls after it started the batch's lease and outside its try): runOnce rejects
 *   with the publisher's error, the claimed rows are never published, and the batch's lease
 *   heartbeat is never stopped: it renews the rows' lease for ever, after relay.close() too, so
 *   lease recovery never gives the rows to another relay.
 */
import { emit, type Publisher } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { relay, statusOf } from './outbox/helpers';

jest.setTimeout(30_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('DELETE FROM outbox_events');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An InMemoryPublisher whose `name` property is defined by `descriptor` (a third party's naming). */
function publisherWith(name: 'destinationName' | 'system', descriptor: PropertyDescriptor): Publisher {
  const publisher = new InMemoryPublisher();
  Object.defineProperty(publisher, name, { configurable: true, ...descriptor });
  return publisher;
}

/** Runs the relay's cycles (a failing one included) until `id` is SENT or `ms` pass; its status. */
async function relayUntilSent(publisher: Publisher, id: string, ms = 5_000): Promise<unknown> {
  const r = relay(t.db, publisher, { lease: { duration: 2_000, heartbeatInterval: 200 } });
  const errors: string[] = [];
  try {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      await r.runOnce().catch((error: unknown) => errors.push(String(error)));
      if ((await statusOf(t.db, id)).status === 'SENT') break;
      await sleep(100);
    }
  } finally {
    await r.close();
  }
  return { status: (await statusOf(t.db, id)).status, runOnceErrors: errors.slice(0, 1) };
}

it('a destinationName that returns a rejected Promise leaves no unhandled rejection; the event is SENT', async () => {
  // What a user sees: the relay process exits with "Error: route lookup failed" from an
  // unhandled rejection (here Jest reports it against this test) although the event was sent.
  const { id } = await emit(t.db, { type: 'order.placed', payload: {}, destination: 'orders' });
  const answers: { handled: boolean }[] = [];
  const publisher = publisherWith('destinationName', {
    value: () => {
      const answer = { handled: false };
      answers.push(answer);
      const rejected = Promise.reject(new Error('route lookup failed'));
      const then = rejected.then.bind(rejected);
      // Whoever handles the rejection (then / catch / Promise.resolve(...).catch) calls then.
      rejected.then = ((...args: Parameters<typeof then>) => {
        answer.handled = true;
        return then(...args);
      }) as typeof rejected.then;
      return rejected;
    },
  });
  expect(await relayUntilSent(publisher, id)).toEqual({ status: 'SENT', runOnceErrors: [] });
  await sleep(50); // an unhandled rejection is reported on a later tick
  expect(answers.length).toBeGreaterThan(0);
  expect(answers.filter((answer) => !answer.handled)).toEqual([]);
});

it('a publisher whose system getter throws still has its events published, and holds no lease after close', async () => {
  // What a user sees: every runOnce rejects with "Error: system unavailable", the event stays
  // PROCESSING, and its lease_expires_at keeps moving forward after relay.close(): no relay,
  // this one restarted or another, ever publishes it.
  const { id } = await emit(t.db, { type: 'order.placed', payload: {}, destination: 'orders' });
  const publisher = publisherWith('system', {
    get: () => {
      throw new Error('system unavailable');
    },
  });
  const outcome = await relayUntilSent(publisher, id);
  // Past the lease's duration after close, nothing of this relay still holds a lease.
  await sleep(3_000);
  const [held] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'PROCESSING' AND lease_expires_at > now()`,
  );
  expect({ ...(outcome as object), leasesHeldAfterClose: held?.n }).toEqual({
    status: 'SENT',
    runOnceErrors: [],
    leasesHeldAfterClose: 0,
  });
});
