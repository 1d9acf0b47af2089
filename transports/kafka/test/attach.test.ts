/**
 * attachKafkaConsumer is synchronous like every ferry transport's attach: it returns at once,
 * keeps trying to start while the brokers are unreachable (reporting each failed start as
 * `disconnected` with the wait before the next), and close() ends it without waiting for a
 * connect in flight.
 */
import type { InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachKafkaConsumer } from '../src';
import { closedPort } from '../../../test-support/closedPort';
import { quickRetries, testConnection, waitFor } from './support';

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
};

test('keeps trying to start against unreachable brokers, reports each try as disconnected, and closes at once', async () => {
  const events: TransportConsumerEvent[] = [];
  const connection = testConnection({
    brokers: [`127.0.0.1:${await closedPort()}`],
    connectionTimeoutMs: 200,
    // Each start's connect retries 100 ms apart: a start fails sooner, as it fails.
    ...quickRetries(),
  });
  const consumer = attachKafkaConsumer(acceptor, {
    connection,
    topic: 'never-created',
    groupId: 'never-joined',
    consumer: 'orders',
    deadLetter: { sendRetries: 1 },
    reconnectBackoff: { initialMs: 20, maxMs: 40, jitter: 'none' },
    observer: (event) => events.push(event),
  });
  try {
    await waitFor(
      () => events.filter((event) => event.type === 'disconnected').length >= 2,
      () => `${events.length} events`,
    );
    expect(events.slice(0, 2)).toEqual([
      {
        type: 'disconnected',
        transport: 'kafka',
        source: 'never-created',
        instance: expect.any(String),
        reason: 'lost',
        error: expect.stringContaining('FERRY_TRANSPORT_ERROR'),
        retryInMs: 20,
      },
      expect.objectContaining({ type: 'disconnected', retryInMs: 40 }),
    ]);
    // The timeout names the last failed session, so a caller of ready() learns why.
    await expect(consumer.ready({ timeoutMs: 50 })).rejects.toMatchObject({
      code: 'FERRY_TIMEOUT',
      message: expect.stringContaining('the last attempt failed: FERRY_TRANSPORT_ERROR'),
    });
  } finally {
    const closing = consumer.close();
    expect(consumer.close()).toBe(closing);
    await closing;
  }
  await expect(consumer.ready()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
});

test('refuses at attach a topic name Kafka never accepts, instead of retrying it forever', () => {
  // Against the real broker each of these is refused on every try (INVALID_TOPIC_EXCEPTION), so a
  // consumer attached to one would report disconnected for ever.
  const connection = testConnection();
  const illegal: [string, readonly string[]][] = [
    ['topics[0]', ['orders placed']],
    ['topics[1]', ['orders', 'orders/eu']],
    ['topics[0]', ['x'.repeat(250)]],
    ['topics[0]', ['..']],
  ];
  for (const [option, topics] of illegal) {
    const attach = () =>
      attachKafkaConsumer(acceptor, { connection, topics, groupId: 'never-joined', consumer: 'orders' });
    expect(attach).toThrow(expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option }));
  }
  const legal = attachKafkaConsumer(acceptor, {
    connection,
    topics: ['orders.v1_EU-2'],
    groupId: 'never-joined',
    consumer: 'orders',
  });
  return legal.close();
});
