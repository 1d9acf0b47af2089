/**
 * Review 124: an observer that re-enters the SQS consumer from inside an event: it calls the
 * consumer's close() synchronously in the callback. Expected: close() settles, no unhandled
 * rejection, the last event is the `disconnected` of `reason: 'closed'` and none comes after it,
 * and every message is stored exactly once (one received and not deleted comes back after its
 * visibility timeout and is answered as a duplicate).
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, type SqsConsumer } from '@ferry/sqs';
import { outcomeWithin } from '../../../test-support/deadlines';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { useSqsConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessages, receiveNone, uniqueName, waitFor } from './support/sqs';

failOnUnhandledRejections();
jest.setTimeout(90_000);

const fixture = useSqsConsumerFixture();
const CLOSE_TIMEOUT_MS = 10_000;

test.each(['connected', 'received', 'accepted', 'settled'] as const)(
  'close() inside %s settles, the closed event is the last, every message stored once',
  async (trigger) => {
    const acceptor = await fixture.freshAcceptor();
    const { queueUrl } = await fixture.queues.declare({ name: uniqueName(`r124-${trigger}`) });
    const messages = outboxMessages(6, queueUrl);
    await new SqsPublisher(fixture.connection).publish(messages, neverAborted());
    const events: TransportConsumerEvent[] = [];
    let closing: Promise<void> | undefined;
    let consumer: SqsConsumer | undefined = undefined;
    consumer = fixture.attach(acceptor, queueUrl, {
      visibilityTimeoutSeconds: 2,
      maxBatchSize: 3,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      observer: (event) => {
        events.push(event);
        if (event.type === trigger && closing === undefined) closing = consumer!.close();
      },
    });
    await waitFor(`a ${trigger} event`, () => (closing !== undefined ? true : undefined));
    expect(await outcomeWithin(closing!, CLOSE_TIMEOUT_MS + 20_000)).toEqual({ value: undefined });
    const count = events.length;
    expect(events[count - 1]).toMatchObject({ type: 'disconnected', reason: 'closed' });

    // A second consumer takes what the first left.
    const settled: TransportConsumerEvent[] = [];
    fixture.attach(acceptor, queueUrl, {
      visibilityTimeoutSeconds: 2,
      observer: (event) => void settled.push(event),
    });
    const deleted = () =>
      [...events, ...settled].reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0);
    await waitFor('every message deleted', () => (deleted() >= messages.length ? true : undefined), 60_000);
    expect(await receiveNone(fixture.connection, queueUrl)).toEqual([]);
    expect((await acceptor.storedIds()).sort()).toEqual(messages.map((m) => m.id).sort());
    expect(events.length).toBe(count);
  },
);
