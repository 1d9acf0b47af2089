/**
 * Review 131: the broker cancels the consumer (its queue deleted) and does not answer the close of
 * its channel that follows (a node blocking the connection under a resource alarm reads nothing of
 * it; a network gone silent, until the heartbeat gives up). check() resolved all along, "attached",
 * while the queue had no consumer of it: the cancel is the loss, and check() says the channel was
 * lost from it. Real broker behind a proxy that goes silent at the channel close, real PostgreSQL.
 */
import { attachRabbitConsumer, RabbitConnection } from '@ferry/rabbitmq';
import { halfOpenProxy } from '../../../test-support/halfOpenProxy';
import { AMQP_URL, checkFailure, consumerCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

const f = useConsumerFixture();

/** The start of a channel.close method frame's payload (class 20, method 40) as the client sends it. */
const CHANNEL_CLOSE = '\u0000\u0014\u0000\u0028';

test('a cancel whose channel close the broker does not answer: check() says the channel was lost at once', async () => {
  const proxy = await halfOpenProxy(new URL(AMQP_URL));
  // A heartbeat far longer than the wait below: the connection stays "up" for the consumer.
  const connection = new RabbitConnection({ url: proxy.url(AMQP_URL), heartbeatSeconds: 60 });
  try {
    const consumer = (f.consumer = attachRabbitConsumer(f.acceptor, {
      connection,
      queue: f.queue,
      consumer: 'billing',
      closeTimeoutMs: 3_000,
    }));
    await consumer.ready({ timeoutMs: 20_000 });
    await expect(consumer.check()).resolves.toBeUndefined();

    proxy.silenceOn(CHANNEL_CLOSE);
    await f.broker.channel.deleteQueue(f.queue);
    const reason = await waitFor('check() down after the cancel', () => checkFailure(consumer));
    expect(reason).toContain('it lost its channel (its connection is up)');
    expect(reason).toContain('cancelled the consumer');
    // The close went unanswered (the proxy silent): no re-attach declared the queue again.
    expect(await consumerCount(f.queue)).toBeUndefined();
    await consumer.close();
  } finally {
    connection.destroy();
    proxy.close();
  }
});
