/**
 * Review 131: the broker cancels the consumer (its queue deleted) and does not answer the close of
 * its channel that follows (a node blocking the connection under a resource alarm reads nothing of
 * it; a network gone silent, until the heartbeat gives up). check() resolved all along, "attached",
 * while the queue had no consumer of it: the cancel is the loss, and check() says the channel was
 * lost from it. Real broker behind a proxy that goes silent at the channel close, real PostgreSQL.
 */
import { attachRabbitConsumer, RabbitConnection, type RabbitConsumer } from '@ferry/rabbitmq';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { HalfOpenProxy } from '../../../test-support/halfOpenProxy';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { AMQP_URL, checkFailure, consumerCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';
import { stageStreamCheck } from './support/streamCheckStage';

jest.setTimeout(60_000);

const f = useConsumerFixture();

/** The start of a channel.close method frame's payload (class 20, method 40) as the client sends it. */
const CHANNEL_CLOSE = '\u0000\u0014\u0000\u0028';

/**
 * Runs `test` with a consumer of the work queue on a connection through a proxy (its heartbeat far
 * longer than the waits here: the connection stays "up" for the consumer), its events recorded;
 * closes and ends all of it after.
 */
async function proxied(
  test: (
    consumer: RabbitConsumer,
    proxy: HalfOpenProxy,
    events: TransportConsumerEvent['type'][],
  ) => Promise<void>,
): Promise<void> {
  const proxy = await halfOpenProxy(new URL(AMQP_URL));
  const connection = new RabbitConnection({ url: proxy.url(AMQP_URL), heartbeatSeconds: 60 });
  const events: TransportConsumerEvent['type'][] = [];
  try {
    const consumer = (f.consumer = attachRabbitConsumer(f.acceptor, {
      connection,
      queue: f.queue,
      consumer: 'billing',
      closeTimeoutMs: 3_000,
      observer: (event) => void events.push(event.type),
    }));
    await test(consumer, proxy, events);
    await consumer.close();
  } finally {
    connection.destroy();
    proxy.close();
  }
}

test('a cancel whose channel close the broker does not answer: check() says the channel was lost at once', () =>
  proxied(async (consumer, proxy) => {
    await consumer.ready({ timeoutMs: 20_000 });
    await expect(consumer.check()).resolves.toBeUndefined();

    proxy.silenceOn(CHANNEL_CLOSE);
    await f.broker.channel.deleteQueue(f.queue);
    const reason = await waitFor('check() down after the cancel', () => checkFailure(consumer));
    expect(reason).toContain('it lost its channel (its connection is up)');
    expect(reason).toContain('cancelled the consumer');
    // The close went unanswered (the proxy silent): no re-attach declared the queue again.
    expect(await consumerCount(f.queue)).toBeUndefined();
  }));

test('a cancel during the attach (its stream check), the channel close unanswered: the attach fails, never "connected"', async () => {
  let silence = (): void => undefined;
  // The queue deleted after the delivery: the broker cancels the consumer, its close unanswered.
  const stage = stageStreamCheck(f.broker.channel, f.queue, async (channel) => {
    const cancelled = new Promise((resolve) => channel.once('cancel', resolve));
    silence();
    await f.broker.channel.deleteQueue(f.queue);
    await cancelled;
  });
  try {
    await proxied(async (consumer, proxy, events) => {
      silence = () => proxy.silenceOn(CHANNEL_CLOSE);
      await waitFor('the stream check staged', () => (stage.staged() ? true : undefined));
      const reason = await waitFor('the attach failed with the cancel', () =>
        events.includes('connected')
          ? 'connected'
          : events.includes('disconnected')
            ? checkFailure(consumer)
            : undefined,
      );
      expect(reason).toContain('cancelled the consumer');
      expect(events).not.toContain('connected');
    });
  } finally {
    stage.restore();
  }
});
