/**
 * A batch is acked with one frame (basic.ack with `multiple`) when it starts at the channel's
 * oldest unsettled delivery, and a multiple ack never covers a delivery still in acceptance
 * (real RabbitMQ and PostgreSQL).
 */
import type { InboxAcceptor, OutboxMessage } from '@ferry/core';
import type { Channel, Message } from 'amqplib';
import { unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

describe('attachRabbitConsumer acks', () => {
  const f = useConsumerFixture(() => ({ prefetch: 50, maxBatchSize: 50 }));
  let frames: { tag: number; multiple: boolean }[] = [];
  let spy: jest.SpyInstance;

  beforeEach(() => {
    frames = [];
    // amqplib's channel class, which the consumer's confirm channel extends.
    const prototype = Object.getPrototypeOf(f.broker.channel) as Channel;
    const ack = prototype.ack;
    spy = jest.spyOn(prototype, 'ack').mockImplementation(function (
      this: Channel,
      message: Message,
      allUpTo?: boolean,
    ) {
      frames.push({ tag: message.fields.deliveryTag, multiple: allUpTo === true });
      return ack.call(this, message, allUpTo);
    });
  });

  afterEach(() => spy.mockRestore());

  function toQueue() {
    return `/${f.queue}`;
  }

  it('acks each batch with one frame', async () => {
    f.acceptor.hold();
    await f.attach({ maxBatchesInFlight: 1 });
    await f.publisher.publish(outboxMessages(20, { destination: toQueue() }), neverAborted());
    await waitFor('all twenty delivered, none acked', async () =>
      (await f.broker.readyCount(f.queue)) === 0 && (await unackedCount(f.queue)) === 20 ? true : undefined,
    );

    f.acceptor.release();

    await waitFor('every delivery acked', async () =>
      (await f.acceptor.storedIds()).length === 20 && (await unackedCount(f.queue)) === 0 ? true : undefined,
    );
    // One batch in flight at a time, so each starts at the oldest unacked delivery.
    let last = 0;
    const expected = f.acceptor.batches.map((size) => {
      last += size;
      return { tag: last, multiple: size > 1 };
    });
    expect(f.acceptor.batches.length).toBeGreaterThan(0);
    expect(frames).toEqual(expected);
  });

  /**
   * Attaches with two batches in flight and publishes one message whose batch is held in
   * acceptance; resolves once it is held, with that message and the function that lets it go on.
   */
  async function holdOlderBatch(): Promise<{ first: OutboxMessage; releaseOlder: () => void }> {
    const first = outboxMessage({ destination: toQueue() });
    let releaseOlder!: () => void;
    const older = new Promise<void>((resolve) => (releaseOlder = resolve));
    let holding = 0;
    const inbox: InboxAcceptor = {
      maxPayloadBytes: f.acceptor.maxPayloadBytes,
      acceptMany: async (inputs) => {
        if (inputs.some((input) => input.messageId === first.id)) {
          holding += 1;
          await older;
        }
        return f.acceptor.acceptMany(inputs);
      },
    };
    await f.attach({ inbox, maxBatchesInFlight: 2 });
    await f.publisher.publish([first], neverAborted());
    await waitFor('the older batch to be held', () => (holding === 1 ? true : undefined));
    return { first, releaseOlder };
  }

  it('acks a newer batch that commits first one delivery at a time, leaving the older one unacked', async () => {
    const { releaseOlder } = await holdOlderBatch();

    await f.publisher.publish(outboxMessages(3, { destination: toQueue() }), neverAborted());
    await waitFor('the newer deliveries acked, the older one not', async () =>
      (await f.broker.readyCount(f.queue)) === 0 && (await unackedCount(f.queue)) === 1 ? true : undefined,
    );
    expect(frames).toHaveLength(3);
    expect(frames.every((frame) => !frame.multiple)).toBe(true);

    releaseOlder();
    await waitFor('every delivery acked', async () =>
      (await unackedCount(f.queue)) === 0 ? true : undefined,
    );
    expect(frames[3]).toEqual({ tag: 1, multiple: false });
    expect(await f.acceptor.storedIds()).toHaveLength(4);
  });

  it('never covers an older batch still in acceptance while a newer one acks and dead-letters', async () => {
    const { first, releaseOlder } = await holdOlderBatch();

    const raw = (id: string, body: string) =>
      f.broker.channel.sendToQueue(f.queue, Buffer.from(body), {
        messageId: id,
        contentType: 'application/json',
      });
    raw(`${first.id}-a`, '{"n":1}');
    raw(`${first.id}-bad`, 'not json');
    raw(`${first.id}-c`, '{"n":3}');
    raw(`${first.id}-d`, '{"n":4}');
    const letters = await waitFor('the newer deliveries settled, the older one not', async () => {
      const settled = (await f.broker.readyCount(f.queue)) === 0 && (await unackedCount(f.queue)) === 1;
      return settled ? f.broker.drain(`${f.queue}.dlq`) : undefined;
    });
    expect(letters.map((m) => m.properties.messageId as string)).toEqual([`${first.id}-bad`]);
    expect(frames.some((frame) => frame.tag === 1 || frame.multiple)).toBe(false);

    releaseOlder();
    await waitFor('every delivery acked', async () =>
      (await unackedCount(f.queue)) === 0 ? true : undefined,
    );
    expect(frames[frames.length - 1]).toEqual({ tag: 1, multiple: false });
    expect(await f.acceptor.storedIds()).toHaveLength(4);
  });
});
