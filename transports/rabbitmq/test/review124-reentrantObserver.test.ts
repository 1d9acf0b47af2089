/**
 * Review 124: an observer that re-enters the RabbitMQ consumer from inside an event: it calls the
 * consumer's close() synchronously in the callback. Expected: close() settles, no unhandled
 * rejection, the `disconnected` of `reason: 'closed'` is the last event, and every message is
 * stored exactly once (one delivered and not acked is redelivered to the next consumer).
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessages } from './support/messages';

failOnUnhandledRejections();

describe('an observer that calls close() inside an event (review 124)', () => {
  let trigger: TransportConsumerEvent['type'] = 'received';
  let events: TransportConsumerEvent[] = [];
  let closing: Promise<void> | undefined;
  const f = useConsumerFixture(() => ({
    prefetch: 3,
    observer: (event) => {
      events.push(event);
      if (event.type === trigger && closing === undefined) closing = f.consumer!.close();
    },
  }));

  test.each(['received', 'accepted', 'settled'] as const)(
    'inside %s: close() settles, the closed event is the last, every message stored once',
    async (type) => {
      events = [];
      closing = undefined;
      trigger = type;
      await f.attach();
      const messages = outboxMessages(9, { destination: `/${f.queue}` });
      await f.publisher.publish(messages, neverAborted());
      await waitFor(`a ${type} event`, () => (closing !== undefined ? true : undefined));
      expect(await outcomeWithin(closing!, 30_000)).toEqual({ value: undefined });
      const count = events.length;
      expect(events[count - 1]).toMatchObject({ type: 'disconnected', reason: 'closed' });

      trigger = 'connected';
      closing = Promise.resolve(); // the next consumer is not closed by its observer
      await f.attach();
      await f.expectStoredOnce(messages.map((m) => m.id));
    },
  );
});
