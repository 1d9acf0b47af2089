/**
 * The lifecycle events of an in-memory consumer attached before its queue exists (review 72 found
 * SQS's consumer reporting that one start as two `connected`): each look at the missing queue is
 * `disconnected`, and the start once it exists is one `connected`, followed by nothing but
 * close()'s `disconnected`.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';

test('a consumer attached before its queue exists reports its one start as one connected', async () => {
  const broker = new InMemoryBroker();
  const acceptor = new MemoryAcceptor();
  const events: TransportConsumerEvent[] = [];
  const consumer = attachInMemoryConsumer(acceptor, {
    broker,
    queue: 'orders',
    consumer: 'billing',
    reconnectBackoff: { initialMs: 5, maxMs: 10 },
    observer: (event) => void events.push(event),
  });
  try {
    await waitUntil('a failed attach', () => events.some((e) => e.type === 'disconnected'));
    broker.declareQueue('orders');
    broker.send('orders', { body: Buffer.from('{"n":1}'), messageId: 'late-1', headers: {} });
    await waitUntil('the delivery settled', () => events.some((e) => e.type === 'settled'));
  } finally {
    await consumer.close();
  }
  const lifecycle = events
    .map((e) => e.type)
    .filter((type) => type === 'connected' || type === 'disconnected');
  const failedAttaches = lifecycle.indexOf('connected');
  expect(failedAttaches).toBeGreaterThan(0);
  expect(lifecycle.slice(failedAttaches)).toEqual(['connected', 'disconnected']);
  expect(acceptor.accepted).toEqual(['late-1']);
});
