/**
 * Review 131: the broker closes the channel of an attach after its consume was answered, while the
 * attach still checks that its queue is no stream (the consumer count read 0, as a quorum queue's
 * slow leader answers, and a delivery arrived meanwhile: the check ends with no request on the
 * channel). The attach counted itself attached
 * on the closed channel: `connected` emitted, check() resolving for ever, no re-attach, nothing
 * consumed. It must fail like any attempt whose channel closed, and re-attach. Real broker, real
 * PostgreSQL.
 */
import { consumerCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { stageStreamCheck } from './support/streamCheckStage';

jest.setTimeout(60_000);

const f = useConsumerFixture();

test('a channel the broker closes during the stream check fails the attach: the consumer re-attaches and consumes', async () => {
  // The queue deleted after the delivery: the broker cancels the consumer and the channel closes.
  const stage = stageStreamCheck(f.broker.channel, f.queue, async (channel) => {
    const closed = new Promise((resolve) => channel.once('close', resolve));
    await f.broker.channel.deleteQueue(f.queue);
    await closed;
  });
  let consumer;
  try {
    consumer = await f.attach();
  } finally {
    stage.restore();
  }
  expect(stage.staged()).toBe(true);

  // The re-attach declares the deleted queue again and consumes it.
  await waitFor('the queue declared again and consumed', async () =>
    (await consumerCount(f.queue)) === 1 ? true : undefined,
  );
  await expect(consumer.check()).resolves.toBeUndefined();
  f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":2}'), { messageId: 'after-reattach' });
  await f.expectStoredOnce(['after-reattach']);
});
