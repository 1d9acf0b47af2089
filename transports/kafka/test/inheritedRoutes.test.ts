/**
 * An event type named like an Object member (`constructor`, `toString`, `__proto__`) finds no
 * route of its own: it goes to `defaultDestination`, as any type without a route (review 47 found
 * the SQS publisher taking the inherited member for a queue; the Kafka routes were a plain object
 * too, and `routes.constructor` read Object).
 */
import type { OutboxMessage } from '@ferry/core';
import { resolvePublisherOptions } from '../src/publisherOptions';
import { topicOf } from '../src/wire';

const message = (type: string): OutboxMessage =>
  ({ id: '00000000-0000-4000-8000-000000000001', type, destination: null }) as unknown as OutboxMessage;

describe('Kafka topic routing by event type', () => {
  const { routing } = resolvePublisherOptions({
    routes: { 'order.placed': 'orders' },
    defaultDestination: 'events',
  });

  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])(
    'routes type %s to the default topic',
    (type) => {
      expect(topicOf(message(type), routing)).toBe('events');
    },
  );

  it('routes a type with a route of its own, whatever its name', () => {
    expect(topicOf(message('order.placed'), routing)).toBe('orders');
    const own = resolvePublisherOptions({ routes: { constructor: 'ctor-topic' } }).routing;
    expect(topicOf(message('constructor'), own)).toBe('ctor-topic');
  });
});
