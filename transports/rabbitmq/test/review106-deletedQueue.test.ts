/**
 * Review 106 (a user attaching ferry's consumer to a queue they already have, `declareTopology:
 * false`): the queue is deleted while the consumer consumes it (RabbitMQ sends basic.cancel).
 * Found working (no defect): the consumer reports `disconnected` naming the cancel, check()
 * rejects naming the missing queue (404) while it is gone, the consumer keeps trying with its
 * backoff, and it consumes the queue again once it is declared anew.
 */
import { waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review106: the queue deleted under a consumer that declares nothing', () => {
  const f = useConsumerFixture();

  it('reports the cancel and the missing queue, and consumes the queue again once it is back', async () => {
    await f.broker.channel.assertQueue(f.queue, { durable: true });
    const errors: string[] = [];
    const consumer = await f.attach({
      declareTopology: false,
      observer: (event) => {
        if (event.type === 'disconnected' && event.error !== undefined) errors.push(event.error);
      },
    });
    await f.broker.channel.deleteQueue(f.queue);
    await waitFor('check() names the missing queue', () =>
      consumer.check().then(
        () => undefined,
        (error: Error) => (/NOT_FOUND - no queue/.test(error.message) ? true : undefined),
      ),
    );
    expect(errors[0]).toContain(`RabbitMQ cancelled the consumer of queue ${f.queue}`);
    await f.broker.channel.assertQueue(f.queue, { durable: true });
    await waitFor('re-attached', () =>
      consumer.check().then(
        () => true,
        () => undefined,
      ),
    );
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'after-delete' });
    await f.expectStoredOnce(['after-delete']);
    await f.broker.channel.deleteQueue(f.queue);
  }, 60_000);
});
