import fc from 'fast-check';
import type { Message } from 'amqplib';
import { ChannelAcks, type AckChannel, type Delivery } from './acks';

/**
 * Model check of ChannelAcks against the broker's view of a channel: whatever order deliveries
 * are settled in (acked in groups, nacked one by one), each call settles exactly the deliveries
 * it was given, no frame names a tag the broker no longer holds, and every delivery ends settled.
 */
class BrokerChannel implements AckChannel {
  readonly open = new Set<number>();
  /** Tags the frames of the current call settled. */
  settled: number[] = [];
  ack(message: Message, allUpTo?: boolean): void {
    this.settle(message.fields.deliveryTag, allUpTo === true);
  }
  nack(message: Message, allUpTo?: boolean): void {
    this.settle(message.fields.deliveryTag, allUpTo === true);
  }
  private settle(tag: number, multiple: boolean): void {
    // RabbitMQ closes the channel (PRECONDITION_FAILED) on a tag it does not hold.
    if (!this.open.has(tag)) throw new Error(`unknown delivery tag ${tag}`);
    const tags = multiple ? [...this.open].filter((t) => t <= tag) : [tag];
    for (const t of tags) this.open.delete(t);
    this.settled.push(...tags);
  }
}

type Step = { readonly kind: 'ack' | 'nack'; readonly tags: readonly number[] };

/** A random order of settling tags 1..count: a permutation cut into groups, each acked or nacked. */
const plans = fc
  .integer({ min: 1, max: 1_300 })
  .chain((count) =>
    fc.tuple(
      fc.shuffledSubarray(
        Array.from({ length: count }, (_, i) => i + 1),
        { minLength: count, maxLength: count },
      ),
      fc.array(fc.integer({ min: 1, max: 80 }), { minLength: count, maxLength: count }),
      fc.array(fc.boolean(), { minLength: count, maxLength: count }),
      fc.boolean(),
    ),
  )
  .map(([order, sizes, nacks, sorted]) => {
    const steps: Step[] = [];
    for (let at = 0, i = 0; at < order.length; i += 1) {
      const group = order.slice(at, at + sizes[i]!);
      at += group.length;
      // Mostly in delivery order (batches of the buffer), sometimes scattered.
      const tags = sorted ? [...group].sort((a, b) => a - b) : group;
      if (nacks[i]) for (const tag of tags) steps.push({ kind: 'nack', tags: [tag] });
      else steps.push({ kind: 'ack', tags });
    }
    return { count: order.length, steps };
  });

describe('ChannelAcks (model)', () => {
  it('settles exactly what each call names, once, in any order', () => {
    fc.assert(
      fc.property(plans, ({ count, steps }) => {
        const channel = new BrokerChannel();
        const acks = new ChannelAcks<BrokerChannel>();
        const byTag = new Map<number, Delivery<BrokerChannel>>();
        for (let tag = 1; tag <= count; tag += 1) {
          const delivery = { channel, message: { fields: { deliveryTag: tag } } as unknown as Message };
          byTag.set(tag, delivery);
          channel.open.add(tag);
          acks.received(delivery);
        }
        for (const step of steps) {
          channel.settled = [];
          const group = step.tags.map((tag) => byTag.get(tag)!);
          if (step.kind === 'ack') expect(acks.ack(group)).toHaveLength(group.length);
          else expect(acks.nack(group[0]!, true)).toBe(true);
          expect(channel.settled.sort((a, b) => a - b)).toEqual([...step.tags].sort((a, b) => a - b));
        }
        expect(channel.open.size).toBe(0);
      }),
      { numRuns: 60 },
    );
  });
});
