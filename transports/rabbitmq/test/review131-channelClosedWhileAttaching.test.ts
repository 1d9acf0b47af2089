/**
 * Review 131: the broker closes the channel of an attach after its consume was answered, while the
 * attach still checks that its queue is no stream (the consumer count read 0, as a quorum queue's
 * slow leader answers, and a delivery arrives during the pause). The attach counted itself attached
 * on the closed channel: `connected` emitted, check() resolving for ever, no re-attach, nothing
 * consumed. It must fail like any attempt whose channel closed, and re-attach. Real broker, real
 * PostgreSQL.
 */
import type { Channel } from 'amqplib';
import { consumerCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

const f = useConsumerFixture();

test('a channel the broker closes during the stream check fails the attach: the consumer re-attaches and consumes', async () => {
  const proto = Object.getPrototypeOf(f.broker.channel) as Record<string, (...args: unknown[]) => unknown>;
  const original = proto.checkQueue!;
  let staged = false;
  const spy = jest.spyOn(proto, 'checkQueue').mockImplementation(function (
    this: Channel,
    ...args: unknown[]
  ) {
    if (this === f.broker.channel || staged) return original.apply(this, args);
    staged = true;
    return (async () => {
      // A delivery reaches the attach's channel, then the queue is deleted: the broker cancels the
      // consumer and the channel closes, all before the count (0, a slow quorum leader) is read.
      const delivered = new Promise((resolve) => this.once('delivery', resolve));
      const closed = new Promise((resolve) => this.once('close', resolve));
      f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'during-check' });
      await delivered;
      await f.broker.channel.deleteQueue(f.queue);
      await closed;
      return { queue: f.queue, messageCount: 0, consumerCount: 0 };
    })();
  });
  let consumer;
  try {
    consumer = await f.attach();
  } finally {
    spy.mockRestore();
  }
  expect(staged).toBe(true);

  // The re-attach declares the deleted queue again and consumes it.
  await waitFor('the queue declared again and consumed', async () =>
    (await consumerCount(f.queue)) === 1 ? true : undefined,
  );
  await expect(consumer.check()).resolves.toBeUndefined();
  f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":2}'), { messageId: 'after-reattach' });
  await f.expectStoredOnce(['after-reattach']);
});
