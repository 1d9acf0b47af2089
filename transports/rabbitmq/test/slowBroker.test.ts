/**
 * A broker answering late, each of a publish's round trips well within confirmTimeoutMs but not
 * all of them together: a publish that missed its deadline must leave what it got (the channel,
 * the exchanges seen to exist) to the next one, or every publish starts over and misses again.
 *
 * Failed first (the flake of review36-unconfirmedCharges "after a silent outage, a slow broker"
 * on a loaded CI machine: 60 s of cycles, nothing sent): a publish left unconfirmed forgot every
 * exchange seen to exist, and a publish whose deadline passed before it put anything on the wire
 * (still waiting for the channel or the exchange check) dropped its channel and forgot the
 * exchanges as well. A channel open (2 round trips), an exchange check (3) and the publish (1)
 * then had to fit one deadline, publish after publish: answers 0.7 s late outlast a 3 s
 * confirmTimeoutMs, and the outbox stood still while the broker answered everything.
 */
import type { ChannelModel } from 'amqplib';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import {
  openTestBroker,
  uniqueName,
  waitFor,
  type TestBroker,
  declareRoutedQueue,
  deleteRoutedQueue,
} from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';
import { SlowLink } from './support/slowLink';

jest.setTimeout(120_000);

let broker: TestBroker;
const exchange = uniqueName('slow_broker_x');
const queue = uniqueName('slow_broker_q');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  broker = await openTestBroker();
  await declareRoutedQueue(broker.channel, exchange, queue);
});

afterAll(async () => {
  await deleteRoutedQueue(broker.channel, exchange, queue);
  await broker.close();
});

/**
 * Counts the channels opened on `connection`'s connections (this one and any after a reconnect):
 * confirm channels (the publisher's), plain ones (its exchange checks' own).
 */
function countChannels(connection: RabbitConnection): { confirm: number; check: number } {
  const counts = { confirm: 0, check: 0 };
  connection.onConnected((model: ChannelModel) => {
    const openConfirm = model.createConfirmChannel.bind(model);
    const openPlain = model.createChannel.bind(model);
    model.createConfirmChannel = () => {
      counts.confirm += 1;
      return openConfirm();
    };
    model.createChannel = () => {
      counts.check += 1;
      return openPlain();
    };
  });
  return counts;
}

/**
 * Publishes `message` (one publish a relay cycle, 0.5 s apart) until it is confirmed, for at most
 * 60 s; the statuses of every publish.
 */
async function publishUntilSent(publisher: RabbitPublisher, message = outboxMessage()): Promise<string[]> {
  const statuses: string[] = [];
  await waitFor(
    'a publish to be confirmed',
    async () => {
      const [outcome] = await publisher.publish([message], neverAborted());
      statuses.push(outcome!.status);
      if (outcome!.status === 'sent') return true;
      await sleep(500);
      return undefined;
    },
    60_000,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; statuses: ${statuses.join(', ')}`);
  });
  return statuses;
}

test('a publish whose deadline passed before it was put on the wire leaves its channel to the next publish', async () => {
  // Answers 1.2 s late: a channel open (2.4 s), an exchange check (2.4 s, then its close) and the
  // publish (1.2 s) each fit the 3 s deadline, never all of them.
  const link = await SlowLink.start();
  link.answerDelayMs = 1_200;
  const connection = new RabbitConnection({
    url: link.url(),
    connectionName: uniqueName('slow_broker_fresh'),
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 3_000,
  });
  try {
    await connection.connect(AbortSignal.timeout(30_000));
    const channels = countChannels(connection);
    const statuses = await publishUntilSent(publisher);
    // Before: each publish given up on while it waited dropped its channel, the next one opened
    // another, and none got as far as its publish (the test timed out).
    expect({
      last: statuses.at(-1),
      charged: statuses.filter((status) => status !== 'unavailable').length,
    }).toEqual({ last: 'sent', charged: 1 });
    expect(channels.confirm).toBe(1);
  } finally {
    await publisher.close();
    await connection.close();
    await link.close();
  }
});

test('a publish the broker left unconfirmed (answering late) does not make the next publish check its exchange again', async () => {
  const link = await SlowLink.start();
  const connection = new RabbitConnection({
    url: link.url(),
    connectionName: uniqueName('slow_broker_unconfirmed'),
    reconnectBackoff: { initialMs: 50, maxMs: 500 },
  });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 3_000,
  });
  try {
    const [warm] = await publisher.publish([outboxMessage({ payload: { warm: true } })], neverAborted());
    expect(warm?.status).toBe('sent'); // the exchange is seen to exist
    const channels = countChannels(connection);
    // The broker answers 4 s late: the publish goes unconfirmed (nothing says the exchange is gone).
    link.answerDelayMs = 4_000;
    const [late] = await publisher.publish([outboxMessage({ payload: { late: true } })], neverAborted());
    expect(late?.status).toBe('unavailable');
    // Then 0.55 s late: a channel open and the publish (1.65 s) fit 3 s; with an exchange check
    // (1.65 s more) the publish went on the wire with too little of its deadline left, went
    // unconfirmed, and the exchanges were forgotten again, publish after publish.
    link.answerDelayMs = 550;
    const statuses = await publishUntilSent(publisher);
    expect(statuses.filter((status) => status !== 'unavailable' && status !== 'sent')).toEqual([]);
    expect(channels.check).toBe(0);
  } finally {
    await publisher.close();
    await connection.close();
    await link.close();
  }
});
