/**
 * InMemoryBroker.restart() as a consumer's observer sees it: the session ends, as on a RabbitMQ
 * restart the consumer's connection drops (`disconnected`) and it consumes again (`connected`);
 * the delivery it held unacked comes back and is accepted once.
 */
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();

/** A broker with queue `q` holding `bodies` (message ids m-1, m-2, ...), a held acceptor and its consumer. */
function heldConsumer(...bodies: string[]) {
  const broker = new InMemoryBroker();
  broker.declareQueue('q');
  const events: TransportConsumerEvent[] = [];
  const acceptor = new MemoryAcceptor();
  acceptor.hold();
  bodies.forEach((body, i) =>
    broker.send('q', { body: Buffer.from(body), headers: { [FERRY_HEADERS.messageId]: `m-${i + 1}` } }),
  );
  const consumer = attachInMemoryConsumer(acceptor, {
    broker,
    queue: 'q',
    consumer: 'c',
    observer: (event) => void events.push(event),
  });
  return { broker, events, acceptor, consumer };
}

describe('InMemoryBroker.restart() and a consumer', () => {
  test('the consumer reports the dropped session (disconnected) and consumes again (connected); held deliveries come back once', async () => {
    const { broker, events, acceptor, consumer } = heldConsumer('{"n":1}');
    try {
      await consumer.ready();
      await waitUntil('the delivery offered', () => acceptor.offered.length === 1, 5_000);
      broker.restart();
      acceptor.release();
      await waitUntil(
        'disconnected, then connected again',
        () => {
          const types = events.map((event) => event.type);
          const dropped = types.indexOf('disconnected');
          return dropped > 0 && types.indexOf('connected', dropped) > dropped;
        },
        5_000,
      );
      expect(events.find((event) => event.type === 'disconnected')).toMatchObject({
        error: expect.stringContaining('restart'),
      });
      await waitUntil('the delivery accepted', () => acceptor.accepted.length >= 1, 5_000);
      await waitUntil('nothing held by the broker', () => broker.held('q') === 0, 5_000);
      expect(acceptor.accepted).toEqual(['m-1']);
    } finally {
      await consumer.close();
    }
  });
  test('reports settled only what the broker settled: the acks of the ended session are ignored, not counted', async () => {
    const { broker, events, acceptor, consumer } = heldConsumer('{"n":1}', 'not json');
    try {
      await waitUntil('the delivery offered', () => acceptor.offered.length === 1, 5_000);
      broker.restart();
      acceptor.release();
      await waitUntil('nothing held by the broker', () => broker.held('q') === 0, 5_000);
      await waitUntil('the last settlement reported', () => settledCount(events) >= 2, 5_000);
      // m-2 was dead-lettered before the restart (settled then), m-1's first ack came after it
      // (ignored by the broker: m-1 was back in the queue) and m-1 was settled once, in the new session.
      expect(
        broker.deadLetters('q').map((letter) => letter.delivery.headers[FERRY_HEADERS.messageId]),
      ).toEqual(['m-2']);
    } finally {
      await consumer.close();
    }
    expect(acceptor.accepted).toEqual(['m-1']);
    expect(settledCount(events)).toBe(2);
    expect(events.filter((event) => event.type === 'dead-lettered')).toHaveLength(1);
  });
});

function settledCount(events: readonly TransportConsumerEvent[]): number {
  return events.reduce((sum, event) => sum + (event.type === 'settled' ? event.count : 0), 0);
}
