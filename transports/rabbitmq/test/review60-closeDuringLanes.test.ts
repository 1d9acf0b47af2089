/**
 * Review 60: a suspect exchange's messages are published alone, one per confirm, on a lane
 * channel of their own (publishAlone). RabbitPublisher.close() closes only the shared channel:
 * a lane goes on publishing the rest of its backlog, one message after the other, after close()
 * has resolved (on a connection the publisher does not own, nothing stops it but the deadline).
 *
 * What a user sees: `await publisher.close()` returns, yet hundreds of messages still reach the
 * queue afterwards and the in-flight publish reports them `sent`; a service that closes its
 * publisher to stop publishing (shutdown, hand-over to another instance) keeps publishing.
 * Expected: after close() resolved, at most the message already in flight reaches the broker;
 * the others are reported not sent (as a publish on the shared channel is: "publisher is closed"),
 * `unavailable`: the relay spends no attempt on what the publisher's close() kept from the broker.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { AMQP_URL, openTestBroker, uniqueName, waitFor, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

jest.setTimeout(120_000);

let broker: TestBroker;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  broker = await openTestBroker();
});

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

afterAll(async () => {
  await broker.close();
});

test('close() during a suspect exchange published alone: the lane goes on publishing after close() resolved', async () => {
  const suspect = uniqueName('r60_suspect');
  const live = uniqueName('r60_close_live');
  const liveQueue = uniqueName('r60_close_live_q');
  await broker.channel.assertExchange(live, 'fanout', { durable: false });
  await broker.channel.assertQueue(liveQueue, { durable: false });
  await broker.channel.bindQueue(liveQueue, live, '');
  // Internal first: refused, it becomes a suspect.
  await broker.channel.assertExchange(suspect, 'fanout', { durable: false, internal: true });
  const queue = uniqueName('r60_suspect_q');
  cleanup.push(
    () => broker.channel.deleteExchange(suspect),
    () => broker.channel.deleteExchange(live),
    () => broker.channel.deleteQueue(queue),
    () => broker.channel.deleteQueue(liveQueue),
  );
  // A connection the application shares (e.g. with its consumer): the publisher does not own it.
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('r60_close') });
  cleanup.push(() => connection.close());
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 60_000 });
  cleanup.push(() => publisher.close());
  const first = await publisher.publish(
    [outboxMessage({ destination: live }), outboxMessage({ destination: suspect })],
    neverAborted(),
  );
  expect(first.map((outcome) => outcome.status)).toEqual(['sent', 'retryable']);
  // The exchange made healthy again; still a suspect: its backlog goes alone, one per confirm.
  await broker.channel.deleteExchange(suspect);
  await broker.channel.assertExchange(suspect, 'fanout', { durable: false });
  await broker.channel.assertQueue(queue, { durable: false });
  await broker.channel.bindQueue(queue, suspect, '');

  const backlog = outboxMessages(400, { destination: suspect });
  const publishing = publisher.publish(backlog, neverAborted());
  await waitFor('the lane has published some', async () =>
    (await broker.readyCount(queue)) > 0 ? true : undefined,
  );
  await publisher.close();
  const atClose = await broker.readyCount(queue);
  const outcomes = await publishing;
  const atEnd = await broker.readyCount(queue);
  // Observed on main: ~300-375 of the 400 reached the queue after close() resolved, reported 'sent'.
  expect(atEnd - atClose).toBeLessThanOrEqual(1);
  expect(outcomes.filter((outcome) => outcome.status === 'sent').length).toBeLessThanOrEqual(atClose + 1);
  // What close() kept from going out (or from being confirmed) spends no attempt: `unavailable`,
  // the ones after it "publisher is closed" (retryable on main before the closed publisher said so).
  const notSent = outcomes.filter((outcome) => outcome.status !== 'sent');
  expect(notSent.length).toBeGreaterThan(0);
  expect(notSent.filter((outcome) => outcome.status !== 'unavailable')).toEqual([]);
  // Only the one in flight at close() says otherwise ("no confirm: RabbitMQ publisher is closed").
  const otherText = notSent.filter(
    (outcome) => 'error' in outcome && outcome.error !== 'publisher is closed',
  );
  expect(otherText.length).toBeLessThanOrEqual(1);
});
