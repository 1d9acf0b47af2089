/**
 * Several batches in flight against a hostile database: an older batch held through an outage
 * while newer ones commit is never covered by their (multiple) acks, close() requeues it, and a
 * crash between commit and ack is answered as duplicates on redelivery (real RabbitMQ and
 * PostgreSQL).
 */
import { FerryError, type InboxAcceptor } from '@ferry/core';
import { closeConnectionsNamed, unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

describe('attachRabbitConsumer: batches in flight against a hostile database', () => {
  const f = useConsumerFixture(() => ({
    prefetch: 50,
    maxBatchSize: 2,
    maxBatchesInFlight: 3,
    retryBackoff: { initialMs: 20, maxMs: 50 },
  }));

  const toQueue = () => `/${f.queue}`;

  it('never acks an older batch held through an outage with the acks of newer batches; close() requeues it', async () => {
    const sick = outboxMessage({ destination: toQueue() });
    let outage = true;
    let sickAttempts = 0;
    const inbox: InboxAcceptor = {
      maxPayloadBytes: f.acceptor.maxPayloadBytes,
      acceptMany: (inputs) => {
        if (outage && inputs.some((i) => i.messageId === sick.id) && ++sickAttempts > 0)
          return Promise.reject(new FerryError('FERRY_DATABASE_UNAVAILABLE', 'connection refused'));
        return f.acceptor.acceptMany(inputs);
      },
    };
    const consumer = await f.attach({ inbox });
    await f.publisher.publish([sick], neverAborted());
    await waitFor('the first batch held, tried twice', () => (sickAttempts >= 2 ? true : undefined));
    const rest = outboxMessages(9, { destination: toQueue() });
    await f.publisher.publish(rest, neverAborted());
    await f.expectStoredOnce(rest.map((m) => m.id));

    // close() waits for the batches in flight; its channel's close requeues what it did not ack:
    // only the held delivery (the channel's oldest), every newer one acked without it.
    await consumer.close();
    const ready = await waitFor('the held delivery requeued', async () => {
      const n = await f.broker.readyCount(f.queue);
      return n === 1 ? n : undefined;
    });
    expect(ready).toBe(1);

    outage = false;
    f.consumer = null;
    await f.attach({ inbox });
    await f.expectStoredOnce([sick.id, ...rest.map((m) => m.id)]);
    expect(await f.backOnClose()).toBe(0);
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
  });

  it('a connection lost between commit and ack with batches in flight: redelivered, answered as duplicates, stored once', async () => {
    const messages = outboxMessages(6, { destination: toQueue() });
    let cut: Promise<void> | null = null;
    let closed = 0;
    let disconnected: () => void = () => undefined;
    const lost = new Promise<void>((resolve) => {
      disconnected = resolve;
    });
    // Closes the consumer's connection from the broker side and waits until the consumer saw it
    // lost: `rabbitmqctl close_connection` returns before the connection is gone, and an ack
    // written meanwhile was taken (nothing redelivered: failed once at load 6-7).
    const cutConnection = async () => {
      closed = await closeConnectionsNamed(f.connectionName);
      await lost;
    };
    const inbox: InboxAcceptor = {
      maxPayloadBytes: f.acceptor.maxPayloadBytes,
      acceptMany: async (inputs) => {
        const results = await f.acceptor.acceptMany(inputs);
        // Committed; the connection goes before the consumer can ack (first time only).
        cut ??= cutConnection();
        await cut;
        return results;
      },
    };
    f.acceptor.hold();
    await f.attach({
      inbox,
      observer: (event) => {
        if (event.type === 'disconnected') disconnected();
      },
    });
    await f.publisher.publish(messages, neverAborted());
    await waitFor('three batches in flight', () => (f.acceptor.held() === 3 ? true : undefined));
    f.acceptor.release();
    await f.expectStoredOnce(messages.map((m) => m.id));
    await waitFor('all acked after redelivery', async () =>
      (await f.broker.readyCount(f.queue)) === 0 && (await unackedCount(f.queue)) === 0 ? true : undefined,
    );
    // Every delivery was offered again after the cut.
    expect(closed).toBeGreaterThan(0);
    expect(f.acceptor.seen.length).toBeGreaterThan(messages.length);
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
  });
});
