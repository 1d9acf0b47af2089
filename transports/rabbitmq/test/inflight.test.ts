/**
 * Several batches in flight (maxBatchesInFlight): each delivery is acked only after its own
 * batch committed, a failing batch goes its own way, and a connection lost with batches in
 * flight loses nothing (real RabbitMQ and PostgreSQL).
 */
import { FerryError, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import pino from 'pino';
import { closeConnectionsNamed, consumerCount, unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

describe('attachRabbitConsumer with several batches in flight', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50, maxBatchSize: 5, maxBatchesInFlight: 3 }));

  function toQueue() {
    return `/${f.queue}`;
  }

  /** Publishes one message and waits until its acceptance is held (one more batch in flight). */
  async function holdOneMore(): Promise<string> {
    const before = f.acceptor.held();
    const message = outboxMessage({ destination: toQueue() });
    await f.publisher.publish([message], neverAborted());
    await waitFor(`batch ${before + 1} in flight`, () =>
      f.acceptor.held() === before + 1 ? true : undefined,
    );
    return message.id;
  }

  it('accepts up to maxBatchesInFlight batches at once and acks each delivery once its batch committed', async () => {
    f.acceptor.hold();
    await f.attach();
    const first = [await holdOneMore(), await holdOneMore(), await holdOneMore()];
    const rest = outboxMessages(17, { destination: toQueue() });
    await f.publisher.publish(rest, neverAborted());
    await waitFor('all twenty delivered, none acked', async () =>
      (await f.broker.readyCount(f.queue)) === 0 && (await unackedCount(f.queue)) === 20 ? true : undefined,
    );
    // The fourth batch waits for a free slot: three acceptMany calls, all still uncommitted.
    expect(f.acceptor.held()).toBe(3);
    expect(f.acceptor.batches).toEqual([1, 1, 1]);
    expect(await f.acceptor.storedIds()).toEqual([]);

    f.acceptor.release();

    await f.expectStoredOnce([...first, ...rest.map((m) => m.id)]);
    expect(await f.backOnClose()).toBe(0);
    expect(f.acceptor.seen).toHaveLength(20);
    expect(Math.max(...f.acceptor.batches)).toBeLessThanOrEqual(5);
  });

  it('close() waits for every batch in flight to commit and be acked, and requeues the deliveries buffered behind them', async () => {
    f.acceptor.hold();
    const consumer = await f.attach();
    const first = [await holdOneMore(), await holdOneMore(), await holdOneMore()];
    const buffered = outboxMessages(5, { destination: toQueue() });
    await f.publisher.publish(buffered, neverAborted());
    // None ready, none acked (acceptance held): all eight with the consumer, unacked.
    await waitFor('all eight delivered', async () =>
      (await f.broker.readyCount(f.queue)) === 0 ? true : undefined,
    );
    let closed = false;
    const closing = consumer.close().then(() => {
      closed = true;
    });
    await waitFor('consuming stopped', async () => ((await consumerCount(f.queue)) === 0 ? true : undefined));
    expect(closed).toBe(false);

    f.acceptor.release();
    await closing;

    await f.expectStoredOnce(first);
    expect(f.acceptor.seen).toHaveLength(3);
    // The channel closed: what it did not ack is back in the queue, and that is the buffered five.
    const requeued = await f.broker.drain(f.queue);
    expect(requeued.map((m) => m.properties.messageId).sort()).toEqual(buffered.map((m) => m.id).sort());
  });

  it('sends a failing batch round the retry queue while the batches beside it stay in acceptance', async () => {
    const events: TransportConsumerEvent[] = [];
    const failing = new Set<string>();
    const inbox: InboxAcceptor = {
      maxPayloadBytes: f.acceptor.maxPayloadBytes,
      acceptMany: (inputs) => {
        // The first attempt of a batch made only of `failing` messages fails (not an outage).
        if (inputs.every((input) => failing.delete(input.messageId))) {
          return Promise.reject(new FerryError('FERRY_DATABASE_ERROR', 'statement failed, cause unknown'));
        }
        return f.acceptor.acceptMany(inputs);
      },
    };
    f.acceptor.hold();
    await f.attach({ inbox, observer: (event) => events.push(event) });
    const held = await holdOneMore();
    const bad = outboxMessage({ destination: toQueue() });
    failing.add(bad.id);

    await f.publisher.publish([bad], neverAborted());

    await waitFor('the failing batch sent round the retry queue', () =>
      events.some((e) => e.type === 'acceptance-failed') ? true : undefined,
    );
    expect(events.filter((e) => e.type === 'acceptance-failed')).toEqual([
      expect.objectContaining({ type: 'acceptance-failed', count: 1 }),
    ]);
    // Back from the retry tier, it is accepted beside the batch still held.
    await waitFor('the retried delivery in acceptance too', () =>
      f.acceptor.held() === 2 ? true : undefined,
    );
    expect(await f.acceptor.storedIds()).toEqual([]);

    f.acceptor.release();

    await f.expectStoredOnce([held, bad.id]);
    expect(await f.backOnClose()).toBe(0);
    expect(await f.broker.readyCount(`${f.queue}.dlq`)).toBe(0);
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
  });

  it('loses nothing and acks nothing on the new channel when the connection drops with batches in flight', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const events: TransportConsumerEvent[] = [];
    f.acceptor.hold();
    await f.attach({ logger, observer: (event) => events.push(event) });
    const first = [await holdOneMore(), await holdOneMore(), await holdOneMore()];
    const buffered = outboxMessages(10, { destination: toQueue() });
    await f.publisher.publish(buffered, neverAborted());
    // None ready, none acked (acceptance held): all thirteen with the consumer, unacked.
    await waitFor('all thirteen delivered', async () =>
      (await f.broker.readyCount(f.queue)) === 0 ? true : undefined,
    );

    expect(await closeConnectionsNamed(f.connectionName)).toBe(1);
    await waitFor('consuming again on a new channel', () =>
      events.filter((e) => e.type === 'connected').length === 2 ? true : undefined,
    );
    // The three batches commit once a new channel is consuming: their acks belong to the old one.
    f.acceptor.release();

    await f.expectStoredOnce([...first, ...buffered.map((m) => m.id)]);
    // Everything redelivered was acked on the new channel: closing it returns nothing.
    expect(await f.backOnClose()).toBe(0);
    // Redelivered, then answered as duplicates.
    expect(f.acceptor.seen.length).toBeGreaterThan(13);
    // An old delivery tag acked on the new channel would close it (406 PRECONDITION_FAILED).
    expect(lines.filter((line) => /PRECONDITION_FAILED|unknown delivery tag/i.test(line))).toEqual([]);
    expect(lines.filter((line) => line.includes('consumer channel error'))).toEqual([]);
  });
});
