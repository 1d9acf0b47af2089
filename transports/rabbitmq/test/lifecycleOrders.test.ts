/**
 * Hostile orders of lifecycle calls on the RabbitMQ consumer and publisher: ready() and close()
 * in every order, close() twice at once, close() before attach, close() while a batch is being
 * accepted, publish() after and during close(). Each call works or fails with a typed
 * FerryError, nothing hangs, no connection of this process to the broker is left open, no
 * rejection goes unhandled, and no delivery is lost or reported sent unconfirmed. A closed
 * publisher answers `unavailable` (the broker out of reach): the relay on it spends no attempt.
 */
import { RabbitConnection, RabbitPublisher, attachRabbitConsumer } from '@ferry/rabbitmq';
import type { TransportPublisherEvent } from '@ferry/core/transport';
import { failOnUnhandledRejections, readyOutcome as outcome } from '../../../test-support/lifecycle';
import { openSocketsTo } from '../../../test-support/openSockets';
import { expectNothingSpent, runRelayOnClosedPublisher } from '../../../test-support/closedPublisherRelay';
import { AMQP_URL, openTestBroker, uniqueName, unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessages } from './support/messages';

const AMQP_PORT = Number(new URL(AMQP_URL).port || 5672);

failOnUnhandledRejections();

describe('RabbitMQ consumer and publisher: any order of lifecycle calls', () => {
  const f = useConsumerFixture(() => ({ prefetch: 10 }));
  const toQueue = (): string => `/${f.queue}`;

  it('close() at once after attach, before ready() resolved: ready() fails FERRY_CLOSED or resolved, no connection is left', async () => {
    const before = openSocketsTo(AMQP_PORT);
    for (let i = 0; i < 5; i += 1) {
      const consumer = attachRabbitConsumer(f.acceptor, {
        connection: AMQP_URL,
        queue: f.queue,
        consumer: 'billing',
      });
      const ready = outcome(consumer.ready());
      // Each step of the attach in turn: connecting, opening the channel, declaring, consuming.
      for (let turn = 0; turn < i * 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      const [a, b] = [consumer.close(), consumer.close()];
      await Promise.all([a, b]);
      expect(['ready', 'FERRY_CLOSED']).toContain(await ready);
      expect(await outcome(consumer.ready())).toBe('FERRY_CLOSED');
    }
    await waitFor('every consumer connection closed', async () =>
      openSocketsTo(AMQP_PORT) <= before ? true : undefined,
    );
  });

  it('ready() after close(), close() twice concurrently, close() after close(): typed and idempotent', async () => {
    const consumer = await f.attach();
    await expect(consumer.ready()).resolves.toBeUndefined();
    const both = await Promise.allSettled([consumer.close(), consumer.close()]);
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    await expect(consumer.close()).resolves.toBeUndefined();
    expect(await outcome(consumer.ready())).toBe('FERRY_CLOSED');
  });

  it('close() while a batch is being accepted waits for it and acks what was accepted; nothing is lost', async () => {
    f.acceptor.hold();
    const consumer = await f.attach();
    const messages = outboxMessages(3, { destination: toQueue() });
    await f.publisher.publish(messages, neverAborted());
    await waitFor('acceptance to start', async () => (f.acceptor.held() > 0 ? true : undefined));
    const order: string[] = [];
    const closing = consumer.close().then(() => order.push('closed'));
    await waitFor('the consumer to stop consuming', async () =>
      (await f.broker.channel.checkQueue(f.queue)).consumerCount === 0 ? true : undefined,
    );
    order.push('released');
    f.acceptor.release();
    await closing;
    expect(order).toEqual(['released', 'closed']);
    // The batch in acceptance was acked (never requeued as well); deliveries still buffered went back.
    expect(await unackedCount(f.queue)).toBe(0);
    const stored = await f.acceptor.storedIds();
    const requeued = (await f.broker.drain(f.queue)).map((m) => String(m.properties.messageId));
    expect(stored.filter((id) => requeued.includes(id))).toEqual([]);
    expect([...stored, ...requeued].sort()).toEqual(messages.map((m) => m.id).sort());
    expect(stored.length).toBeGreaterThan(0);
  });

  it('the shared connection closed under a running consumer: close() still resolves, ready() after it fails FERRY_CLOSED, nothing is left', async () => {
    const before = openSocketsTo(AMQP_PORT);
    const consumer = await f.attach();
    await f.publisher.close();
    await f.connection.close();
    await Promise.all([consumer.close(), consumer.close()]);
    expect(await outcome(consumer.ready())).toBe('FERRY_CLOSED');
    await waitFor('the shared connection closed', async () =>
      openSocketsTo(AMQP_PORT) <= before ? true : undefined,
    );
  });

  it('attached to a shared connection already closed: ready() fails FERRY_CLOSED at once, close() resolves', async () => {
    await f.publisher.close();
    await f.connection.close();
    const consumer = attachRabbitConsumer(f.acceptor, {
      connection: f.connection,
      queue: f.queue,
      consumer: 'billing',
    });
    expect(await outcome(consumer.ready({ timeoutMs: 10_000 }))).toBe('FERRY_CLOSED');
    await consumer.close();

    // Closed while the consumer's first connect is under way.
    const connecting = new RabbitConnection({ url: AMQP_URL });
    const early = attachRabbitConsumer(f.acceptor, {
      connection: connecting,
      queue: f.queue,
      consumer: 'billing',
    });
    await connecting.close();
    expect(await outcome(early.ready({ timeoutMs: 10_000 }))).toBe('FERRY_CLOSED');
    await early.close();
  });

  it('publish() after close() and close() twice: every message unavailable ("publisher is closed"), none sent, no observer event, no connection left', async () => {
    await f.attach(); // declares the work queue
    await f.consumer?.close();
    const before = openSocketsTo(AMQP_PORT);
    const events: TransportPublisherEvent[] = [];
    const publisher = new RabbitPublisher(AMQP_URL, { observer: (event) => void events.push(event) });
    await publisher.connect();
    await Promise.all([publisher.close(), publisher.close()]);
    const outcomes = await publisher.publish(outboxMessages(2, { destination: toQueue() }), neverAborted());
    // Observed on main: retryable, an attempt spent per event and cycle on a closed publisher.
    expect(outcomes.map((o) => [o.status, 'error' in o ? o.error : null])).toEqual([
      ['unavailable', 'publisher is closed'],
      ['unavailable', 'publisher is closed'],
    ]);
    // Observed on main: a publish-failed (unavailable, "publisher is closed") per call after close()
    // resolved, to an observer its owner had shut down (review 148).
    expect(events).toEqual([]);
    expect(await f.broker.readyCount(f.queue)).toBe(0);
    await waitFor('the publisher connection closed', async () =>
      openSocketsTo(AMQP_PORT) <= before ? true : undefined,
    );
  });

  it('close() during publish(): publish() resolves with an outcome per message, each one reported sent is in the queue, the others unavailable', async () => {
    await f.attach(); // declares the work queue
    await f.consumer?.close();
    for (let turns = 0; turns < 6; turns += 1) {
      const publisher = new RabbitPublisher(AMQP_URL);
      await publisher.connect();
      const messages = outboxMessages(50, { destination: toQueue() });
      const publishing = publisher.publish(messages, neverAborted());
      for (let turn = 0; turn < turns * 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
      await Promise.all([publisher.close(), publisher.close()]);
      const outcomes = await publishing;
      expect(outcomes.map((o) => o.id)).toEqual(messages.map((m) => m.id));
      const sent = new Set(outcomes.filter((o) => o.status === 'sent').map((o) => o.id));
      // What close() kept from being confirmed is the broker out of reach, not the message's fault.
      expect(outcomes.filter((o) => o.status !== 'sent' && o.status !== 'unavailable')).toEqual([]);
      const queued = (await f.broker.drain(f.queue)).map((m) => String(m.properties.messageId));
      expect([...sent].filter((id) => !queued.includes(id))).toEqual([]);
    }
  });
});

// Observed on main: the events in flight at close() and every later cycle's batches answered
// retryable ("publisher is closed"): retry_count 1, then FAILED after maxRetries cycles.
it('the relay on a publisher closed under it keeps every event not confirmed PENDING with no attempt spent, cycle after cycle; only what the broker took is SENT', async () => {
  const broker = await openTestBroker();
  const queue = uniqueName('closed_relay_q');
  try {
    await broker.channel.assertQueue(queue, { durable: false });
    const run = await runRelayOnClosedPublisher({
      publisher: new RabbitPublisher(AMQP_URL),
      destination: `/${queue}`,
      taken: async () => (await broker.drain(queue)).map((m) => String(m.properties.messageId)),
    });
    expectNothingSpent(run);
  } finally {
    await broker.channel.deleteQueue(queue);
    await broker.close();
  }
});
