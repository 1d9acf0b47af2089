/**
 * Review 130: a consumer declares its topology once per attach. Its attach declared the work
 * queue, its dead-letter exchange and queue, its retry tiers and its bindings on the channel it
 * consumes on, then opened its copy channel (review 122), which declared all of them again as it
 * opened: twice the round trips on every attach and every re-attach. Counted here by wrapping
 * amqplib's channel methods (the test's own channel left out); real broker, real PostgreSQL.
 */
import type { Channel } from 'amqplib';
import { closeConnectionsNamed, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import type { TransportConsumerEvent } from '@ferry/core/transport';

jest.setTimeout(60_000);

const f = useConsumerFixture();

type Method = 'assertQueue' | 'assertExchange' | 'bindQueue';
const METHODS: readonly Method[] = ['assertQueue', 'assertExchange', 'bindQueue'];

/** Records `method name` for each topology call made on a channel other than `own`. */
function recordDeclares(own: Channel): { calls: string[]; restore: () => void } {
  const proto = Object.getPrototypeOf(own) as Record<Method, (...args: unknown[]) => unknown>;
  const calls: string[] = [];
  const spies = METHODS.map((method) => {
    const original = proto[method];
    return jest.spyOn(proto, method).mockImplementation(function (this: Channel, ...args: unknown[]) {
      if (this !== own) calls.push(`${method} ${String(args[0])}`);
      return original.apply(this, args);
    });
  });
  return { calls, restore: () => spies.forEach((spy) => spy.mockRestore()) };
}

test('each attach declares every queue, exchange and binding once (first attach and a re-attach)', async () => {
  const exchange = `${f.queue}.in`;
  const recorded = recordDeclares(f.broker.channel);
  const events: TransportConsumerEvent['type'][] = [];
  try {
    const consumer = await f.attach({
      observer: (event) => void events.push(event.type),
      bindings: [{ exchange, routingKey: 'orders.#' }],
      retryBackoff: { initialMs: 100, maxMs: 200 },
      maxTransportRetries: 2,
    });
    const { names } = consumer;
    const once = [
      `assertExchange ${names.deadLetterExchange}`,
      `assertQueue ${names.deadLetterQueue}`,
      `bindQueue ${names.deadLetterQueue}`,
      ...names.retryQueues.map((queue) => `assertQueue ${queue}`),
      `assertQueue ${names.queue}`,
      `assertExchange ${exchange}`,
      `bindQueue ${names.queue}`,
    ].sort();
    expect([...recorded.calls].sort()).toEqual(once);

    // A lost connection: the re-attach declares it once more, once.
    recorded.calls.length = 0;
    expect(await closeConnectionsNamed(f.connectionName)).toBe(1);
    await waitFor('the consumer lost and re-attached', () =>
      events.lastIndexOf('connected') > events.indexOf('disconnected') ? true : undefined,
    );
    expect([...recorded.calls].sort()).toEqual(once);

    // Its copies still find the topology: a delivery refused as invalid reaches the dead-letter queue.
    recorded.restore();
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{not json'), {
      messageId: 'unparseable',
      contentType: 'application/json',
    });
    const dead = await f.settled(1, 20_000);
    expect(dead.map((message) => message.properties.messageId)).toEqual(['unparseable']);
  } finally {
    recorded.restore();
    await f.broker.channel.deleteExchange(exchange).catch(() => undefined);
  }
});
