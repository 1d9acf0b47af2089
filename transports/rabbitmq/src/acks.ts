import type { Message } from 'amqplib';

/** The part of an amqplib channel that settles deliveries. */
export interface AckChannel {
  ack(message: Message, allUpTo?: boolean): void;
  nack(message: Message, allUpTo?: boolean, requeue?: boolean): void;
}

/** A delivery and the channel it arrived on (the only channel that can settle it). */
export interface Delivery<C extends AckChannel = AckChannel> {
  readonly message: Message;
  readonly channel: C;
}

/** The deliveries of one channel not settled yet, in delivery order (tags only grow on a channel). */
interface Outstanding {
  readonly tags: number[];
  /** Index of the first tag that may still be outstanding; the tags before it are settled. */
  head: number;
  /** Tags settled out of order, at or after `head`. */
  readonly settled: Set<number>;
}

/**
 * Settles deliveries with as few frames as the protocol allows. Every delivery is registered
 * on arrival (`received`); acking a set of deliveries sends one `basic.ack` with `multiple`
 * for the run of them that starts at the channel's oldest unsettled delivery, and a plain
 * ack for each of the others. A multiple ack never covers a delivery that is not being acked
 * now: one still in acceptance, held, or on its way to a retry or dead-letter copy stays
 * outstanding. One frame instead of one per delivery matters: each frame is a write to the
 * socket, and the broker sends the next deliveries in one burst rather than one per ack.
 */
export class ChannelAcks<C extends AckChannel = AckChannel> {
  private readonly channels = new Map<C, Outstanding>();

  received(delivery: Delivery<C>): void {
    let outstanding = this.channels.get(delivery.channel);
    if (!outstanding) {
      outstanding = { tags: [], head: 0, settled: new Set() };
      this.channels.set(delivery.channel, outstanding);
    }
    outstanding.tags.push(delivery.message.fields.deliveryTag);
  }

  /** The channel is gone: its deliveries can no longer be settled (the broker redelivers them). */
  forget(channel: C): void {
    this.channels.delete(channel);
  }

  /** Acks `deliveries`; returns those acked (an ack on a closed channel throws and is not counted). */
  ack(deliveries: readonly Delivery<C>[]): Delivery<C>[] {
    const byChannel = new Map<C, Delivery<C>[]>();
    for (const delivery of deliveries) {
      const group = byChannel.get(delivery.channel);
      if (group) group.push(delivery);
      else byChannel.set(delivery.channel, [delivery]);
    }
    const acked: Delivery<C>[] = [];
    for (const [channel, group] of byChannel) acked.push(...this.ackOnChannel(channel, group));
    return acked;
  }

  /** Nacks one delivery; false when the channel is gone. */
  nack(delivery: Delivery<C>, requeue: boolean): boolean {
    this.settledOutOfOrder(delivery);
    return attempt(() => delivery.channel.nack(delivery.message, false, requeue));
  }

  private ackOnChannel(channel: C, group: readonly Delivery<C>[]): Delivery<C>[] {
    const outstanding = this.channels.get(channel);
    const byTag = new Map(group.map((d) => [d.message.fields.deliveryTag, d]));
    let last: Delivery<C> | undefined;
    const run: Delivery<C>[] = [];
    if (outstanding) {
      const { tags, settled } = outstanding;
      while (outstanding.head < tags.length) {
        const tag = tags[outstanding.head]!;
        const delivery = byTag.get(tag);
        if (delivery) {
          byTag.delete(tag);
          run.push(delivery);
          last = delivery;
        } else if (!settled.delete(tag)) break;
        outstanding.head += 1;
      }
      this.compact(outstanding);
    }
    const acked: Delivery<C>[] = [];
    if (last && attempt(() => channel.ack(last.message, run.length > 1))) acked.push(...run);
    for (const delivery of byTag.values()) {
      this.settledOutOfOrder(delivery);
      if (attempt(() => channel.ack(delivery.message, false))) acked.push(delivery);
    }
    return acked;
  }

  private settledOutOfOrder(delivery: Delivery<C>): void {
    const outstanding = this.channels.get(delivery.channel);
    if (!outstanding) return;
    const tag = delivery.message.fields.deliveryTag;
    if (outstanding.tags[outstanding.head] === tag) {
      outstanding.head += 1;
      while (outstanding.head < outstanding.tags.length) {
        if (!outstanding.settled.delete(outstanding.tags[outstanding.head]!)) break;
        outstanding.head += 1;
      }
      this.compact(outstanding);
    } else {
      outstanding.settled.add(tag);
    }
  }

  /** Drops the settled prefix once it is long enough to be worth the copy. */
  private compact(outstanding: Outstanding): void {
    if (outstanding.head < 1024 && outstanding.head * 2 < outstanding.tags.length) return;
    outstanding.tags.splice(0, outstanding.head);
    outstanding.head = 0;
  }
}

/** Runs a channel call; false when it throws (the channel is closed, the broker redelivers). */
function attempt(call: () => void): boolean {
  try {
    call();
    return true;
  } catch {
    return false;
  }
}
