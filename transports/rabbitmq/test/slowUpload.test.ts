/**
 * A message too large to upload within confirmTimeoutMs over a slow uplink (here ~100 KB/s from
 * ferry to the broker, a 600 KB message: ~6 s against 2 s), while small messages on the same
 * link are confirmed at once. Every publish after it on the connection waits behind its upload:
 * its batch's later messages went unconfirmed with it, publish after publish. The publisher now
 * publishes a message the broker left unconfirmed last, after its batch's others (failed first in
 * d51abb9). It does not charge it: a charge for it (4e949c0) also charged messages a connection
 * lost or gone half-open, or a concurrent upload, left unconfirmed, and outlasted the lease after
 * an outage (review 36); on one connection these cannot be told apart from a slow upload. Such a
 * message stays `unavailable` (documented in the README) until confirmTimeoutMs fits its upload.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import {
  AMQP_URL,
  openTestBroker,
  uniqueName,
  waitFor,
  type TestBroker,
  declareRoutedQueue,
  deleteRoutedQueue,
} from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';
import type { OutboxMessage } from '@ferry/core';

jest.setTimeout(120_000);

let broker: TestBroker;
let proxy: TcpProxy;
const exchange = uniqueName('slow_upload_x');
const queue = uniqueName('slow_upload_q');

beforeAll(async () => {
  broker = await openTestBroker();
  await declareRoutedQueue(broker.channel, exchange, queue);
  const target = new URL(AMQP_URL);
  // At most 10,000 bytes to the broker per 100 ms.
  proxy = await TcpProxy.start(
    { host: target.hostname, port: Number(target.port || 5672) },
    { upstreamBytesPerTick: 10_000 },
  );
});

/** How many messages `queue` holds. */
async function queued(): Promise<number> {
  return (await broker.channel.checkQueue(queue)).messageCount;
}

/** Waits (at most 60 s) until `queue` holds `count` messages: a given-up upload has finished. */
async function untilQueued(count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await queued()) < count) {
    if (Date.now() > deadline) throw new Error(`the queue never held ${count} messages`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

afterAll(async () => {
  await proxy.close();
  await deleteRoutedQueue(broker.channel, exchange, queue);
  await broker.close();
});

test('a message too big for the link within confirmTimeoutMs: unavailable (never charged), small ones confirmed meanwhile', async () => {
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
  const before = await queued();
  try {
    for (let cycle = 0; cycle < 3; cycle += 1) {
      const [small] = await publisher.publish([outboxMessage({ payload: { cycle } })], neverAborted());
      seen.push(`small:${small!.status}`);
      const [outcome] = await publisher.publish([big], neverAborted());
      seen.push(`big:${outcome!.status}`);
      // The given-up upload finishes meanwhile: both are routed before the next cycle.
      await untilQueued(before + 2 * (cycle + 1));
    }
    expect(seen.filter((s) => s.startsWith('small:'))).toEqual(['small:sent', 'small:sent', 'small:sent']);
    // Not charged: on one connection a slow upload cannot be told from a silent one (review 36).
    expect(seen.filter((s) => s.startsWith('big:'))).toEqual([
      'big:unavailable',
      'big:unavailable',
      'big:unavailable',
    ]);
  } finally {
    await publisher.close();
    await connection.close();
  }
});

test("a message too big for the link goes last: its batch's small messages are confirmed", async () => {
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
  const before = await queued();
  try {
    expect(await statuses([outboxMessage({ payload: { warm: true } })])).toEqual(['sent']);
    // The large message holds back what follows it on the connection: small2 is not confirmed either.
    const firstTry = await statuses([small1, big, small2]);
    expect(firstTry.slice(1)).toEqual(['unavailable', 'unavailable']);
    // The given-up upload finishes, and small2 behind it: warm, small1, big and small2 routed.
    await untilQueued(before + 4);
    // Tried again: the large message goes last, so its small neighbours are confirmed (before:
    // small2 waited behind it again, unconfirmed, publish after publish).
    expect(await statuses([small1, big, small2])).toEqual(['sent', 'unavailable', 'sent']);
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
