import type { Channel } from 'amqplib';

/**
 * Stages what befalls an attach's channel during its stream check (review 131): at the first
 * checkQueue on a channel other than `own` (the test's), a delivery of `queue` reaches that
 * channel, then `then(channel)` runs (the queue deleted, say); the count then reads 0, as a quorum
 * queue's slow leader answers, so the delivery alone ends the check. `restore()` ends the staging.
 */
export function stageStreamCheck(
  own: Channel,
  queue: string,
  then: (channel: Channel) => Promise<void>,
): { staged(): boolean; restore(): void } {
  const proto = Object.getPrototypeOf(own) as Record<string, (...args: unknown[]) => unknown>;
  const original = proto.checkQueue!;
  let staged = false;
  const spy = jest.spyOn(proto, 'checkQueue').mockImplementation(function (
    this: Channel,
    ...args: unknown[]
  ) {
    if (this === own || staged) return original.apply(this, args);
    staged = true;
    return (async () => {
      const delivered = new Promise((resolve) => this.once('delivery', resolve));
      own.sendToQueue(queue, Buffer.from('{"n":1}'), { messageId: 'during-check' });
      await delivered;
      await then(this);
      return { queue, messageCount: 0, consumerCount: 0 };
    })();
  });
  return { staged: () => staged, restore: () => spy.mockRestore() };
}
