/**
 * Review 79: broker.restart() while the in-memory consumer's batch is still in acceptance (the
 * database slow, or down and the batch held through the outage). A RabbitMQ consumer reports a
 * broker restart when its connection drops (`disconnected` from the channel's close, whatever
 * its batches in flight are doing); the in-memory consumer looks for the restart only between two
 * batches, so it says nothing until the acceptance answers, for as long as the outage lasts.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();

describe('InMemoryBroker.restart() during an acceptance in flight', () => {
  test('the consumer reports the dropped session while the batch is still in acceptance', async () => {
    const broker = new InMemoryBroker();
    broker.declareQueue('q');
    const events: TransportConsumerEvent[] = [];
    const acceptor = new MemoryAcceptor();
    acceptor.hold();
    broker.send('q', { body: Buffer.from('{"n":1}'), headers: { [FERRY_HEADERS.messageId]: 'm-1' } });
    const consumer = attachInMemoryConsumer(acceptor, {
      broker,
      queue: 'q',
      consumer: 'c',
      observer: (event) => void events.push(event),
    });
    try {
      await consumer.ready();
      await waitUntil('the delivery in acceptance', () => acceptor.held > 0, 5_000);
      broker.restart();
      const reported = await waitUntil(
        'disconnected reported while the acceptance is held',
        () => events.some((event) => event.type === 'disconnected'),
        3_000,
      ).catch(() => false);
      expect({ reported, stillHeld: acceptor.held > 0 }).toEqual({ reported: true, stillHeld: true });
    } finally {
      acceptor.release();
      await consumer.close();
    }
  });
});
