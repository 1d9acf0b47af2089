/**
 * Review 102: close() of a consumer on a shared RabbitConnection (given to it and to others, its
 * owner closes it) whose link goes silent (TCP open, nothing crosses) while a batch is in
 * acceptance. Past closeTimeoutMs the consumer's channels are closed unanswered; the connection is
 * not the consumer's to destroy (its other users' work would be cut with it). What a user needs
 * then, and what this test holds: close() settles within its bound; the delivery it gave up on
 * goes back to the queue without the owner closing the connection, once the heartbeats find the
 * link dead (the broker's and amqplib's, about two heartbeatSeconds), and is answered as a
 * duplicate by the next consumer; the shared connection serves its other users again once the
 * link is back (it reconnects on its own; the closed consumer does not re-attach).
 */
import { RabbitConnection, RabbitPublisher, type RabbitConsumer } from '@ferry/rabbitmq';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { outboxMessage, neverAborted } from './support/messages';
import { SlowLink } from './support/slowLink';
import { outcomeWithin } from '../../../test-support/deadlines';
import { lockTable } from '../../../test-support/rowLocks';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(90_000);

const CLOSE_TIMEOUT_MS = 500;
/** Far beyond closeTimeoutMs, with room for the test machine. */
const CLOSE_WITHIN_MS = 15_000;
/** The shortest heartbeat, so that the link is found dead within seconds. */
const HEARTBEAT_SECONDS = 1;

const fixture = useConsumerFixture();

test('a consumer on a shared connection whose link went silent: close() settles within closeTimeoutMs, its delivery goes back to the queue without the owner closing the connection, which serves its other users again once the link is back', async () => {
  const link = await SlowLink.start();
  const shared = new RabbitConnection({
    url: link.url(),
    connectionName: uniqueName('r102_shared'),
    heartbeatSeconds: HEARTBEAT_SECONDS,
    connectTimeoutMs: 2_000,
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  // Another user of the shared connection.
  const neighbour = new RabbitPublisher(shared, { confirmTimeoutMs: 5_000 });
  const lock: { end: () => Promise<void> } = { end: async () => undefined };
  try {
    const events: TransportConsumerEvent[] = [];
    const consumer: RabbitConsumer = await fixture.attach({
      connection: shared,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      observer: (event) => events.push(event),
    });
    const before = outboxMessage({ destination: `/${fixture.queue}` });
    await fixture.publisher.publish([before], neverAborted());
    await fixture.expectStoredOnce([before.id]);

    lock.end = (await lockTable(fixture.database.url, 'test_inbox')).end;
    const during = outboxMessage({ destination: `/${fixture.queue}` });
    await fixture.publisher.publish([during], neverAborted());
    await waitFor('the second delivery in acceptance', () =>
      fixture.acceptor.seen.includes(during.id) ? true : undefined,
    );

    link.setSilent(true);
    const closed = await outcomeWithin(Promise.all([consumer.close(), consumer.close()]), CLOSE_WITHIN_MS);
    expect(closed).toEqual({ value: [undefined, undefined] });
    expect(events.filter((event) => event.type === 'disconnected' && event.retryInMs === null)).toEqual([
      expect.objectContaining({ reason: 'closed' }),
    ]);
    const after = events.length;

    // The acceptance commits once the table is free; its ack never reaches the broker.
    await lock.end();
    await fixture.expectStoredOnce([before.id, during.id]);

    // The owner does not close the shared connection: the delivery is back in the queue all the
    // same, and the next consumer (on the fixture's own connection) answers it as a duplicate.
    await fixture.attach();
    await waitFor('the delivery given up on answered again as a duplicate', () =>
      fixture.acceptor.seen.filter((id) => id === during.id).length >= 2 ? true : undefined,
    );
    await fixture.expectStoredOnce([before.id, during.id]);
    expect(shared.closed).toBe(false);

    // The link back, the shared connection serves its other users again.
    link.setSilent(false);
    await waitFor('the shared connection publishing again', async () => {
      const [outcome] = await neighbour.publish(
        [outboxMessage({ destination: `/${fixture.queue}` })],
        neverAborted(),
      );
      return outcome?.status === 'sent' ? true : undefined;
    });
    // Nothing reported by the closed consumer after its `closed`, nor re-attached by it.
    expect(events.slice(after)).toEqual([]);
  } finally {
    await lock.end();
    await neighbour.close();
    await shared.close();
    await link.close();
  }
});
