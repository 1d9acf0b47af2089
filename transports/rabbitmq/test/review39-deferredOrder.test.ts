/**
 * Review 39: b70b832 publishes the messages the broker left unconfirmed last, "without ordering
 * keys the smallest first", so that a message too large to upload within confirmTimeoutMs no
 * longer holds back its batch neighbours (slowUpload.test.ts). The smallest-first order only
 * applies to keyless messages: every keyed deferred message goes first, in batch order, whatever
 * its size. So when the message too large for the link carries an ordering key, the small
 * messages left unconfirmed behind it the first time (keyless, or of another key) are published
 * behind its upload again on every later publish, unconfirmed again, for as long as it is in
 * their batch: the relay re-claims the released rows together, so healthy events stay
 * `unavailable` for ever (and the batch reads as an outage to the relay's circuit). Ordering keys
 * only order messages of the same key; a small message of another key, or of none, need not wait
 * behind it.
 *
 * Link and sizes as slowUpload.test.ts: ~100 KB/s from ferry to the broker, a 600 KB message
 * (~6 s) against confirmTimeoutMs 2 s.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import type { OutboxMessage } from '@ferry/core';
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

jest.setTimeout(120_000);

let broker: TestBroker;
let proxy: TcpProxy;
const exchange = uniqueName('r39_deferred_x');
const queue = uniqueName('r39_deferred_q');

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

afterAll(async () => {
  await proxy.close();
  await deleteRoutedQueue(broker.channel, exchange, queue);
  await broker.close();
});

async function neighbourStatuses(small2: OutboxMessage): Promise<string[]> {
  const connection = new RabbitConnection({
    url: proxy.urlFor(AMQP_URL),
    connectionName: uniqueName('r39_deferred'),
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 2_000,
  });
  const small1 = outboxMessage({ payload: { n: 1 }, orderingKey: null });
  // Too large for the link within confirmTimeoutMs, and keyed.
  const big = outboxMessage({ payload: { filler: 'x'.repeat(600_000) }, orderingKey: 'big-key' });
  const statuses = async (messages: readonly OutboxMessage[]) =>
    (await publisher.publish(messages, neverAborted())).map((outcome) => outcome.status);
  try {
    expect(await statuses([outboxMessage({ payload: { warm: true }, orderingKey: null })])).toEqual(['sent']);
    // First try: small2 waits behind the big upload on the connection and goes unconfirmed too.
    const firstTry = await statuses([small1, big, small2]);
    expect(firstTry.slice(1)).toEqual(['unavailable', 'unavailable']);
    // The given-up upload finishes meanwhile.
    await waitFor('the given-up upload through the link', () =>
      proxy.queuedUpstreamBytes === 0 ? true : undefined,
    );
    // Tried again (the relay re-claims the released rows together): the big message should go
    // last so that its small neighbour is confirmed.
    return await statuses([small1, big, small2]);
  } finally {
    await publisher.close();
    await connection.close();
  }
}

test('a keyless small neighbour of a keyed message too big for the link is confirmed once tried again', async () => {
  const small2 = outboxMessage({ payload: { n: 2 }, orderingKey: null });
  // Fails: ['sent', 'unavailable', 'unavailable']: the keyed big message is published first
  // among the deferred ones, and small2 waits behind its upload again.
  expect(await neighbourStatuses(small2)).toEqual(['sent', 'unavailable', 'sent']);
});

test('a small neighbour of another ordering key is confirmed once tried again', async () => {
  const small2 = outboxMessage({ payload: { n: 2 }, orderingKey: 'other-key' });
  // Fails the same way: keyed deferred messages keep batch order across different keys.
  expect(await neighbourStatuses(small2)).toEqual(['sent', 'unavailable', 'sent']);
});
