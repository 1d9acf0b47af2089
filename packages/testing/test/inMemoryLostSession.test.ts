/**
 * The in-memory consumer loses its session while a batch is in flight (the class of review 79's
 * restart finding): broker.restart() ends the session, deleteQueue() cancels the consumer. As a
 * RabbitMQ consumer reports a closed channel at once, whatever its batches are doing, the
 * in-memory consumer reports `disconnected` at once and check() rejects while it does not consume;
 * a batch held through an outage is released (RabbitMQ releases a hold whose channel closed: its
 * deliveries are queued again anyway), so the consumer consumes again (`connected`) without
 * waiting for the outage to end.
 */
import { ConsumerDisconnectedError, FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();

const WAIT = 3_000;

function setUp(options: { readonly retryBackoff?: { initialMs: number; maxMs: number } } = {}) {
  const broker = new InMemoryBroker();
  broker.declareQueue('q');
  const events: TransportConsumerEvent[] = [];
  const acceptor = new MemoryAcceptor();
  broker.send('q', { body: Buffer.from('{"n":1}'), headers: { [FERRY_HEADERS.messageId]: 'm-1' } });
  const start = () =>
    attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      ...options,
      observer: (event) => void events.push(event),
    });
  const types = () =>
    events.map((event) => event.type).filter((t) => t === 'connected' || t === 'disconnected');
  return { broker, acceptor, events, start, types };
}

const probe = (check: () => Promise<void>): Promise<unknown> =>
  check().then(
    () => 'up',
    (error: unknown) => error,
  );

describe('the in-memory consumer loses its session while an acceptance is in flight', () => {
  test.each([
    ['broker.restart()', (broker: InMemoryBroker) => broker.restart()],
    ['broker.deleteQueue()', (broker: InMemoryBroker) => broker.deleteQueue('q')],
  ])('%s: disconnected at once, check() down while the acceptance is held', async (_name, lose) => {
    const { broker, acceptor, start, types } = setUp();
    acceptor.hold();
    const consumer = start();
    try {
      await consumer.ready({ timeoutMs: WAIT });
      await waitUntil('the delivery in acceptance', () => acceptor.held > 0, WAIT);
      expect(await probe(() => consumer.check())).toBe('up');
      lose(broker);
      const reported = await waitUntil('disconnected', () => types().includes('disconnected'), WAIT).catch(
        () => false,
      );
      const during = await probe(() => consumer.check());
      expect({
        reported,
        types: types(),
        down: during instanceof ConsumerDisconnectedError,
        stillHeld: acceptor.held > 0,
      }).toEqual({ reported: true, types: ['connected', 'disconnected'], down: true, stillHeld: true });
    } finally {
      acceptor.release();
      await consumer.close();
    }
  });

  test('after the restart, once the acceptance answered: connected, check() up, the delivery accepted once', async () => {
    const { broker, acceptor, start, types } = setUp();
    acceptor.hold();
    const consumer = start();
    try {
      await waitUntil('the delivery in acceptance', () => acceptor.held > 0, WAIT);
      broker.restart();
      await waitUntil('disconnected', () => types().includes('disconnected'), WAIT);
      acceptor.release();
      await waitUntil('connected again', () => types().join() === 'connected,disconnected,connected', WAIT);
      await waitUntil('check() up again', async () => (await probe(() => consumer.check())) === 'up', WAIT);
      await waitUntil('nothing held by the broker', () => broker.held('q') === 0, WAIT);
      expect(acceptor.accepted).toEqual(['m-1']);
    } finally {
      acceptor.release();
      await consumer.close();
    }
  });
});

describe('the in-memory consumer whose batch is held through an outage', () => {
  test('broker.restart() releases the hold: it consumes again at once and takes the delivery again', async () => {
    // The outage's next attempt is a minute away: only the release can end the hold before it.
    const { broker, acceptor, start, types } = setUp({ retryBackoff: { initialMs: 60_000, maxMs: 60_000 } });
    acceptor.failNext(Number.MAX_SAFE_INTEGER);
    const consumer = start();
    try {
      await waitUntil('the first offer failed', () => acceptor.offered.length === 1, WAIT);
      broker.restart();
      const again = await waitUntil(
        'connected again, the delivery offered again',
        () => types().join() === 'connected,disconnected,connected' && acceptor.offered.length === 2,
        WAIT,
      ).catch(() => false);
      expect({ again, types: types(), offered: acceptor.offered }).toEqual({
        again: true,
        types: ['connected', 'disconnected', 'connected'],
        offered: ['m-1', 'm-1'],
      });
    } finally {
      await consumer.close();
    }
  });
});
