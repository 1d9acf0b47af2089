/**
 * Review 101: close() of a consumer whose batch is being stored while PostgreSQL is slow (another
 * session holds the inbox table ACCESS EXCLUSIVE, as a migration does). close() waited for
 * buffer.drained(), which has no bound of its own: the acceptance's statement timeout at best,
 * for ever with none. close() settles within `closeTimeoutMs` (as Kafka's), reports
 * `disconnected` (closed) once, and loses nothing: the delivery it gave up on goes back to the
 * queue unacked, and is answered as a duplicate by the next consumer once the acceptance committed.
 * Both ways the consumer can hold its connection: its own (destroyed) and a shared one (its
 * channels closed, the connection left to its owner).
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { AMQP_URL, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { outboxMessage, neverAborted } from './support/messages';
import { outcomeWithin } from '../../../test-support/deadlines';
import { lockTable } from '../../../test-support/rowLocks';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

const CLOSE_TIMEOUT_MS = 500;
/** Far beyond closeTimeoutMs and the close answers (CLOSE_ANSWER_MS), with room for the test machine. */
const CLOSE_WITHIN_MS = 15_000;

const fixture = useConsumerFixture();

for (const owned of [true, false]) {
  test(`close() of a consumer storing a batch in a locked table settles within closeTimeoutMs, reports closed once, loses nothing (${owned ? 'its own connection' : 'a shared connection'})`, async () => {
    const events: TransportConsumerEvent[] = [];
    const consumer = await fixture.attach({
      ...(owned ? { connection: { url: AMQP_URL, connectionName: uniqueName('r101_own') } } : {}),
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      observer: (event) => events.push(event),
    });
    const before = outboxMessage({ destination: `/${fixture.queue}` });
    await fixture.publisher.publish([before], neverAborted());
    await fixture.expectStoredOnce([before.id]);

    const lock = await lockTable(fixture.database.url, 'test_inbox');
    try {
      const during = outboxMessage({ destination: `/${fixture.queue}` });
      await fixture.publisher.publish([during], neverAborted());
      await waitFor('the second delivery in acceptance', () =>
        fixture.acceptor.seen.includes(during.id) ? true : undefined,
      );

      const closed = await outcomeWithin(Promise.all([consumer.close(), consumer.close()]), CLOSE_WITHIN_MS);
      expect(closed).toEqual({ value: [undefined, undefined] });
      expect(events.filter((event) => event.type === 'disconnected' && event.retryInMs === null)).toEqual([
        expect.objectContaining({ reason: 'closed' }),
      ]);

      // The acceptance goes on once the table is free: stored, never acked by the closed consumer.
      await lock.end();
      await fixture.expectStoredOnce([before.id, during.id]);
      const after = events.length;

      // The next consumer (on the fixture's connection; closed by the fixture after the test).
      await fixture.attach();
      await waitFor('the delivery given up on answered again as a duplicate', () =>
        fixture.acceptor.seen.filter((id) => id === during.id).length >= 2 ? true : undefined,
      );
      await fixture.expectStoredOnce([before.id, during.id]);
      // Nothing reported by the closed consumer after its `closed`.
      expect(events.slice(after)).toEqual([]);
    } finally {
      await lock.end();
    }
  });
}
