import type { Message } from 'amqplib';
import { ChannelAcks, type AckChannel, type Delivery } from './acks';

type Frame = { op: 'ack' | 'nack'; tag: number; multiple: boolean; requeue?: boolean };

/** A channel that records each frame it would send; `closed` makes every call throw, as amqplib does. */
class FakeChannel implements AckChannel {
  readonly frames: Frame[] = [];
  closed = false;
  ack(message: Message, allUpTo?: boolean): void {
    if (this.closed) throw new Error('Channel closed');
    this.frames.push({ op: 'ack', tag: message.fields.deliveryTag, multiple: allUpTo === true });
  }
  nack(message: Message, allUpTo?: boolean, requeue?: boolean): void {
    if (this.closed) throw new Error('Channel closed');
    this.frames.push({
      op: 'nack',
      tag: message.fields.deliveryTag,
      multiple: allUpTo === true,
      requeue: requeue === true,
    });
  }
}

function deliveries(channel: FakeChannel, from: number, to: number): Delivery<FakeChannel>[] {
  const list: Delivery<FakeChannel>[] = [];
  for (let tag = from; tag <= to; tag += 1) {
    list.push({ channel, message: { fields: { deliveryTag: tag } } as unknown as Message });
  }
  return list;
}

/** The tags a sequence of frames settles, given the tags delivered (the broker's view). */
function settledBy(frames: readonly Frame[], delivered: readonly number[]): number[] {
  const open = new Set(delivered);
  const settled: number[] = [];
  for (const frame of frames) {
    const tags = frame.multiple ? [...open].filter((t) => t <= frame.tag) : [frame.tag];
    for (const tag of tags) {
      expect(open.has(tag)).toBe(true); // never settles a tag twice
      open.delete(tag);
      settled.push(tag);
    }
  }
  return settled.sort((a, b) => a - b);
}

describe('ChannelAcks', () => {
  function setup(count: number) {
    const channel = new FakeChannel();
    const acks = new ChannelAcks<FakeChannel>();
    const all = deliveries(channel, 1, count);
    for (const delivery of all) acks.received(delivery);
    return { channel, acks, all };
  }

  it('acks a batch that starts at the oldest unsettled delivery with one multiple ack', () => {
    const { channel, acks, all } = setup(5);

    expect(acks.ack(all)).toHaveLength(5);

    expect(channel.frames).toEqual([{ op: 'ack', tag: 5, multiple: true }]);
  });

  it('never lets a multiple ack cover a delivery still in acceptance', () => {
    const { channel, acks, all } = setup(6);
    const [older, newer] = [all.slice(0, 3), all.slice(3)];

    // The newer batch commits first: tags 1-3 are still in acceptance, so each is acked alone.
    acks.ack(newer);
    expect(channel.frames).toEqual([4, 5, 6].map((tag) => ({ op: 'ack', tag, multiple: false })));
    expect(settledBy(channel.frames, [1, 2, 3, 4, 5, 6])).toEqual([4, 5, 6]);

    acks.ack(older);
    expect(channel.frames.slice(3)).toEqual([{ op: 'ack', tag: 3, multiple: true }]);
    expect(settledBy(channel.frames, [1, 2, 3, 4, 5, 6])).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('stops the run at a delivery being dead-lettered or held, and runs on once it is settled', () => {
    const { channel, acks, all } = setup(6);
    type D = Delivery<FakeChannel>;
    const [d1, d2, d3, d4, d5, d6] = all as [D, D, D, D, D, D];

    acks.ack([d1, d2, d4, d5]); // d3 waits for its dead-letter copy
    expect(channel.frames).toEqual([
      { op: 'ack', tag: 2, multiple: true },
      { op: 'ack', tag: 4, multiple: false },
      { op: 'ack', tag: 5, multiple: false },
    ]);
    acks.nack(d3, true); // requeued
    acks.ack([d6]);
    expect(channel.frames.slice(3)).toEqual([
      { op: 'nack', tag: 3, multiple: false, requeue: true },
      { op: 'ack', tag: 6, multiple: false },
    ]);
    expect(settledBy(channel.frames, [1, 2, 3, 4, 5, 6])).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('settles each channel on its own', () => {
    const acks = new ChannelAcks<FakeChannel>();
    const [a, b] = [new FakeChannel(), new FakeChannel()];
    const both = [...deliveries(a, 1, 3), ...deliveries(b, 1, 2)];
    for (const delivery of both) acks.received(delivery);

    expect(acks.ack(both)).toHaveLength(5);

    expect(a.frames).toEqual([{ op: 'ack', tag: 3, multiple: true }]);
    expect(b.frames).toEqual([{ op: 'ack', tag: 2, multiple: true }]);
  });

  it('counts nothing acked on a closed channel, and forgets it', () => {
    const { channel, acks, all } = setup(3);
    channel.closed = true;

    expect(acks.ack(all)).toEqual([]);
    expect(acks.nack(all[0]!, true)).toBe(false);
    acks.forget(channel);
    channel.closed = false;
    // A channel it no longer tracks is acked one delivery at a time.
    expect(acks.ack(all.slice(1))).toHaveLength(2);
    expect(channel.frames).toEqual([
      { op: 'ack', tag: 2, multiple: false },
      { op: 'ack', tag: 3, multiple: false },
    ]);
  });

  it('keeps multiple acks exact across many interleaved batches', () => {
    const { channel, acks, all } = setup(1000);
    const batches: Delivery<FakeChannel>[][] = [];
    for (let i = 0; i < all.length; i += 50) batches.push(all.slice(i, i + 50));
    // Batches finish in pairs, the newer of each pair first.
    for (let i = 0; i < batches.length; i += 2) {
      if (batches[i + 1]) acks.ack(batches[i + 1]!);
      acks.ack(batches[i]!);
    }

    expect(
      settledBy(
        channel.frames,
        all.map((d) => d.message.fields.deliveryTag),
      ),
    ).toHaveLength(1000);
    expect(channel.frames.length).toBeLessThan(1000 / 2 + 20);
  });
});
