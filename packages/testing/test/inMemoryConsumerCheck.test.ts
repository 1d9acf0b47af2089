/**
 * consumer.check() of the in-memory consumer, the readiness probe every ferry consumer has
 * (review 71): down while its queue does not exist (not declared yet, deleted under it), up while
 * it consumes, up again once the queue is back, FERRY_CLOSED once closed. ready() stays the
 * start-up gate: once it consumed, it resolves whatever becomes of the queue.
 */
import { ConsumerDisconnectedError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { InMemoryBroker, attachInMemoryConsumer, waitUntil } from '@ferry/testing';
import { MemoryAcceptor } from '@ferry/testing/conformance';

const probe = (check: () => Promise<void>): Promise<unknown> =>
  check().then(
    () => 'up',
    (error: unknown) => error,
  );

test('check() is down while the queue is missing, up while consuming, FERRY_CLOSED once closed', async () => {
  const broker = new InMemoryBroker();
  const events: TransportConsumerEvent[] = [];
  const consumer = attachInMemoryConsumer(new MemoryAcceptor(), {
    broker,
    queue: 'orders',
    consumer: 'billing',
    reconnectBackoff: { initialMs: 5, maxMs: 10 },
    observer: (event) => void events.push(event),
  });
  const what = 'in-memory consumer billing of queue orders';
  try {
    const before = await probe(() => consumer.check());
    expect(before).toBeInstanceOf(ConsumerDisconnectedError);
    expect(before).toMatchObject({ code: 'FERRY_TRANSPORT_ERROR', consumer: what });
    expect((before as Error).message).toBe(
      `${what} is not connected: it has not attached yet; the last attempt failed: ` +
        'FERRY_PERMANENT_FAILURE: in-memory queue orders does not exist (declare it with broker.declareQueue)',
    );

    broker.declareQueue('orders');
    await consumer.ready({ timeoutMs: 5_000 });
    expect(await probe(() => consumer.check())).toBe('up');

    const connected = events.filter((event) => event.type === 'connected').length;
    const missing = events.filter((event) => event.type === 'disconnected').length;
    broker.deleteQueue('orders');
    await waitUntil(
      'the missing queue reported',
      () => events.filter((event) => event.type === 'disconnected').length > missing,
    );
    const during = await probe(() => consumer.check());
    expect(during).toBeInstanceOf(ConsumerDisconnectedError);
    expect((during as Error).message).toMatch(
      /^in-memory consumer billing of queue orders is not connected: it lost its connection and has not re-attached; the last failure: /,
    );
    await expect(consumer.ready({ timeoutMs: 1 })).resolves.toBeUndefined();

    broker.declareQueue('orders');
    await waitUntil('check() up again', async () => (await probe(() => consumer.check())) === 'up');
    expect(events.filter((event) => event.type === 'connected').length).toBeGreaterThan(connected);
  } finally {
    await consumer.close();
  }
  await expect(consumer.check()).rejects.toMatchObject({
    code: 'FERRY_CLOSED',
    message: `${what} is closed`,
  });
});
