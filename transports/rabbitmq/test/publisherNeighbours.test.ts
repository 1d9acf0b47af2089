/**
 * An event the broker refuses must not cost the other events of its batch (review13 probes).
 *
 * review13: headers under ferry's own 64 KiB table bound (headerTableFault) can still be larger
 * than the connection's negotiated frame_max (a `frameMax` in the URL, which amqplib honours, or
 * a broker configured with a smaller `frame_max`; 4096 is the minimum AMQP allows). amqplib
 * writes the content header as one frame anyway; RabbitMQ closes the whole connection
 * (FRAME_ERROR), and publisher.ts publishOn reports every message of the batch `unavailable`
 * (connectionLost): the event and its innocent neighbours spend no attempt, the same batch is
 * claimed and fails the same way every cycle (and a cycle of only such outcomes opens the
 * circuit), for ever. The event that cannot fit a frame must be `permanent` (its reason naming
 * frame_max), and its neighbour must be sent.
 *
 * review13: the publisher remembers exchanges it saw (knownExchanges) and publishes a batch on
 * one channel. When one event's exchange was deleted since, RabbitMQ closes the channel at that
 * publish (404 NOT_FOUND) and publisher.ts publishOn reports every later message of the batch
 * `retryable`, to exchanges that exist too: each innocent neighbour spends an attempt (FAILED
 * once its attempts are spent) for another event's missing exchange. Only the event to the
 * missing exchange may be charged; its neighbour must be sent (or handed back unspent).
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

let broker: TestBroker;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  broker = await openTestBroker();
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  await broker.close();
});

test('Review finding (failed first): an event whose headers exceed frame_max fails alone; its neighbour in the batch is sent', async () => {
  const exchange = uniqueName('r13_fm_x');
  const queue = uniqueName('r13_fm_q');
  await broker.channel.assertExchange(exchange, 'topic', { durable: true });
  await broker.channel.assertQueue(queue, { durable: true });
  await broker.channel.bindQueue(queue, exchange, '#');
  cleanup.push(
    () => broker.channel.deleteExchange(exchange),
    () => broker.channel.deleteQueue(queue),
  );
  const connection = new RabbitConnection({
    url: `${AMQP_URL}?frameMax=4096`,
    connectionName: uniqueName('review13-framemax'),
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 5_000,
  });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  const good = outboxMessage();
  // 6,000 bytes: far under ferry's 64 KiB header table bound, over a 4,096-byte frame.
  const bad = outboxMessage({ headers: { 'x-large': 'a'.repeat(6_000) } });
  const outcomes = await publisher.publish([good, bad], neverAborted());
  expect(outcomes[0]).toEqual({ id: good.id, status: 'sent' });
  expect(outcomes[1]).toMatchObject({
    id: bad.id,
    status: 'permanent',
    error: expect.stringContaining('frame_max'),
  });
}, 60_000);

test('Review finding (failed first): an event to an exchange deleted since does not charge its neighbour to a live exchange', async () => {
  const doomed = uniqueName('r13_doomed_x');
  const live = uniqueName('r13_live_x');
  const queue = uniqueName('r13_live_q');
  await broker.channel.assertExchange(doomed, 'fanout', { durable: true });
  await broker.channel.assertExchange(live, 'fanout', { durable: true });
  await broker.channel.assertQueue(queue, { durable: true });
  await broker.channel.bindQueue(queue, live, '');
  cleanup.push(
    () => broker.channel.deleteExchange(live),
    () => broker.channel.deleteQueue(queue),
  );
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review13-doomed') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 5_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  const routed = (exchange: string) => outboxMessage({ destination: exchange });
  // Both exchanges seen once (mandatory copies to the unbound one come back returned: fine).
  await publisher.publish([routed(doomed), routed(live)], neverAborted());
  await broker.channel.deleteExchange(doomed);
  const bad = routed(doomed);
  const good = routed(live);
  const outcomes = await publisher.publish([bad, good], neverAborted());
  expect(outcomes[0]).toMatchObject({
    id: bad.id,
    status: 'retryable',
    error: expect.stringContaining(doomed),
  });
  expect(outcomes[1]).toMatchObject({ id: good.id, status: expect.stringMatching(/^(sent|unavailable)$/) });
}, 60_000);
