/**
 * Review 156 (failed first): a publisher shared for months by a relay's pipelined claims, several
 * relays (a tenant each) or an application's own publishes. Each publish call added a listener
 * of its own to the connection ('close') and to the shared confirm channel ('error') for as long
 * as it ran: eleven calls at once passed Node's limit of 10, a MaxListenersExceededWarning
 * ("possible EventEmitter memory leak") in the application's log, and the emitters held a
 * listener per call in flight. What should happen: however many calls run at once, each emitter
 * holds at most one listener of the calls per event (core's onEmitterEvent), the most held is
 * the same after N rounds and after 2N, and none is left once the calls ended.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import {
  AMQP_URL,
  declareRoutedQueue,
  deleteRoutedQueue,
  openTestBroker,
  uniqueName,
  type TestBroker,
} from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';
import { watchListeners } from './support/listenerWatch';

const AT_ONCE = 30;
const ROUNDS = 20;

let broker: TestBroker;
beforeAll(async () => {
  broker = await openTestBroker();
});
afterAll(async () => {
  await broker.close();
});

test(`${AT_ONCE} publishes at once on one publisher: at most one listener of theirs per emitter and event, the same after N and 2N rounds`, async () => {
  const exchange = uniqueName('r156_x');
  const queue = uniqueName('r156_q');
  await declareRoutedQueue(broker.channel, exchange, queue);
  const watch = watchListeners();
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review156') });
  const publisher = new RabbitPublisher(connection, {
    defaultDestination: exchange,
    confirmTimeoutMs: 10_000,
  });
  const rounds = async (count: number): Promise<void> => {
    for (let round = 0; round < count; round += 1) {
      const outcomes = await Promise.all(
        Array.from({ length: AT_ONCE }, () => publisher.publish([outboxMessage()], neverAborted())),
      );
      expect(outcomes.flat().map((outcome) => outcome.status)).toEqual(Array(AT_ONCE).fill('sent'));
    }
  };
  try {
    await rounds(ROUNDS);
    const afterN = new Map(watch.most);
    await rounds(ROUNDS);
    expect(new Map(watch.most)).toEqual(afterN);
    const crowded = [...watch.most].filter(([, count]) => count > 3);
    expect(crowded).toEqual([]);
  } finally {
    watch.stop();
    await publisher.close();
    await connection.close();
    await deleteRoutedQueue(broker.channel, exchange, queue);
  }
});
