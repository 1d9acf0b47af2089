/**
 * A message too large to upload within confirmTimeoutMs over a slow uplink (here ~100 KB/s from
 * ferry to the broker, a 600 KB message: ~6 s against 2 s), while small messages on the same
 * link are confirmed at once. The publisher reported it `unavailable` on every publish ("nothing
 * in a message makes RabbitMQ withhold its confirm"): no attempt was ever spent, it never became
 * FAILED and held its ordering key for ever, and a relay cycle holding only it (all outcomes
 * unavailable) counted towards the circuit breaker, which then stopped every destination although
 * the broker took the other events. Kafka and SQS charge such a record (their review 15 and
 * slowUpload tests); so must RabbitMQ, without charging a silent broker (publisher.test.ts) or a
 * broker under a resource alarm (review14-alarm).
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { AMQP_URL, openTestBroker, uniqueName, waitFor, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';
import type { OutboxMessage } from '@ferry/core';

jest.setTimeout(120_000);

let broker: TestBroker;
let proxy: TcpProxy;
const exchange = uniqueName('slow_upload_x');
const queue = uniqueName('slow_upload_q');

beforeAll(async () => {
  broker = await openTestBroker();
  await broker.channel.assertExchange(exchange, 'topic', { durable: true });
  await broker.channel.assertQueue(queue, { durable: true });
  await broker.channel.bindQueue(queue, exchange, '#');
  const target = new URL(AMQP_URL);
  // At most 10,000 bytes to the broker per 100 ms.
  proxy = await TcpProxy.start(
    { host: target.hostname, port: Number(target.port || 5672) },
    { upstreamBytesPerTick: 10_000 },
  );
});

afterAll(async () => {
  await proxy.close();
  await broker.channel.deleteQueue(queue);
  await broker.channel.deleteExchange(exchange);
  await broker.close();
});

test('a message too big for the link within confirmTimeoutMs, while small ones are confirmed: charged, not unavailable for ever', async () => {
  const connection = new RabbitConnection({
    url: proxy.urlFor(AMQP_URL),
    connectionName: uniqueName('slow_upload'),
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 2_000,
  });
  const big = outboxMessage({ payload: { filler: 'x'.repeat(600_000) } });
  const seen: string[] = [];
  try {
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const [small] = await publisher.publish([outboxMessage({ payload: { cycle } })], neverAborted());
      seen.push(`small:${small!.status}`);
      const [outcome] = await publisher.publish([big], neverAborted());
      seen.push(`big:${outcome!.status}`);
      // The given-up upload finishes meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
    }
    expect(seen.filter((s) => s.startsWith('small:'))).toEqual(['small:sent', 'small:sent', 'small:sent']);
    // Before: unavailable three times, although the broker confirmed every small message.
    expect(seen.filter((s) => s.startsWith('big:'))).toEqual([
      'big:unavailable',
      'big:retryable',
      'big:retryable',
    ]);
  } finally {
    await publisher.close();
    await connection.close();
  }
});

test("a message too big for the link is charged alone: its batch's small messages are not", async () => {
  const connection = new RabbitConnection({
    url: proxy.urlFor(AMQP_URL),
    connectionName: uniqueName('slow_upload_neighbours'),
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 2_000,
  });
  const small1 = outboxMessage({ payload: { n: 1 } });
  const big = outboxMessage({ payload: { filler: 'x'.repeat(600_000) } });
  const small2 = outboxMessage({ payload: { n: 2 } });
  const statuses = async (messages: readonly OutboxMessage[]) =>
    (await publisher.publish(messages, neverAborted())).map((outcome) => outcome.status);
  try {
    expect(await statuses([outboxMessage({ payload: { warm: true } })])).toEqual(['sent']);
    // The large message holds back what follows it on the connection: small2 is not confirmed either.
    const firstTry = await statuses([small1, big, small2]);
    expect(firstTry.slice(1)).toEqual(['unavailable', 'unavailable']);
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    // Tried again: the large message goes last and alone and is charged; its small neighbours are
    // confirmed (before: small2 waited behind it again, unconfirmed; big unavailable for ever).
    expect(await statuses([small1, big, small2])).toEqual(['sent', 'retryable', 'sent']);
  } finally {
    await publisher.close();
    await connection.close();
  }
});

test('a message tried during a second silent outage spends no attempt (unavailable, as in the first)', async () => {
  const target = new URL(AMQP_URL);
  const silent = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5672) });
  const connection = new RabbitConnection({
    url: silent.urlFor(AMQP_URL),
    connectionName: uniqueName('second_outage'),
    reconnectBackoff: { initialMs: 50, maxMs: 200 },
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 1_500,
  });
  const statuses = async (messages: readonly OutboxMessage[]) =>
    (await publisher.publish(messages, neverAborted())).map((outcome) => outcome.status);
  const event = outboxMessage({ payload: { n: 1 } });
  try {
    expect(await statuses([outboxMessage({ payload: { warm: true } })])).toEqual(['sent']);
    const seen: string[] = [];
    // A first silent outage (packets dropped): unavailable, no attempt spent.
    await silent.setMode('blackhole');
    seen.push(...(await statuses([event])));
    // The network is back: the broker confirms the relay's other publishes.
    await silent.setMode('pass');
    await waitFor('a publish after the outage to be confirmed', async () =>
      (await statuses([outboxMessage({ payload: { n: 2 } })]))[0] === 'sent' ? true : undefined,
    );
    // A second silent outage before the event's next cycle: nothing is answered at all.
    await silent.setMode('blackhole');
    seen.push(...(await statuses([event])));
    expect(seen).toEqual(['unavailable', 'unavailable']);
  } finally {
    await publisher.close();
    await connection.close();
    await silent.close();
  }
});
