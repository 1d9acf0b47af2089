/**
 * review45: a NOTIFY cuts the relay's error back-off short.
 *
 * What I did: a relay with `listenUrl` whose claim fails every time (its database answers
 * emit's NOTIFY fine, but the relay's own statements fail: its pool exhausted, its role refused,
 * its connection through a proxy gone silent; here an executor that fails the claim with the
 * retriable FERRY_DATABASE_UNAVAILABLE the translation gives a lost connection), while the
 * application emits an event every 50 ms, for 2.5 s. `errorBackoff` is 1,000 ms.
 *
 * What happened: the loop's back-off is `this.wake.wait(delay)`, the same wait a NOTIFY ends
 * (WakeSignal), and a notification that arrived while the failing cycle ran is kept pending, so
 * the wait returns at once. The relay sent a claim for (nearly) every notification: dozens of
 * failed cycles in 2.5 s, each logged at error, instead of three. With a completion that fails
 * (pipelined, or onSent 'delete' without DELETE) each such cycle also republishes the batch, so
 * duplicates grow at the emit rate instead of once per back-off.
 *
 * What should happen (docs/outbox.md: `errorBackoff` "Wait after a failed cycle (database down),
 * doubling to 30 s"; `infrastructure-error`: "the running loop backs off (errorBackoff)"): after
 * a failed cycle the loop waits its back-off whatever notifications arrive; a notification may
 * shorten the idle poll wait, not the error back-off.
 *
 * Fix direction: in run()'s catch, wait with a plain timer that only close() ends (e.g. a
 * separate `wake.sleep(ms)` that ignores notify, or remember the notification for after the
 * back-off).
 */
import { createRelay, emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { failingStatements, silent } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('keeps its error back-off while the application emits (NOTIFY) during a database failure', async () => {
  let claims = 0;
  const relay = createRelay({
    db: failingStatements(t.db, 'claimed AS', () => void (claims += 1)),
    publisher: new InMemoryPublisher(),
    listenUrl: t.url,
    logger: silent,
    options: { errorBackoff: 1_000, pollInterval: 10_000 },
  });
  relay.start();
  try {
    const until = Date.now() + 2_500;
    let n = 0;
    while (Date.now() < until) {
      await emit(t.db, { type: 'review45.tick', payload: { n: n++ } });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await relay.close();
  }
  // Back-off 1 s, then 2 s: claims at about 0 s and 1 s (3 s is past the window). Allow one more.
  expect(claims).toBeLessThanOrEqual(3);
}, 20_000);

it('does not republish an event at the emit rate while its completion keeps failing', async () => {
  await t.db.execute('DELETE FROM outbox_events');
  const { id } = await emit(t.db, { type: 'review45.first', payload: {} });
  const publisher = new InMemoryPublisher();
  const relay = createRelay({
    db: failingStatements(t.db, "status = 'SENT'"),
    publisher,
    listenUrl: t.url,
    logger: silent,
    options: { errorBackoff: 1_000, pollInterval: 10_000 },
  });
  relay.start();
  try {
    const until = Date.now() + 2_500;
    let n = 0;
    while (Date.now() < until) {
      await emit(t.db, { type: 'review45.tick', payload: { n: n++ } });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await relay.close();
  }
  // Each failed completion hands the event back and the next cycle publishes it again: after
  // 0 s and 1 s of back-off that is twice in 2.5 s (allow one more), not once per notification.
  expect(publisher.deliveryCounts().get(id) ?? 0).toBeLessThanOrEqual(3);
}, 20_000);
