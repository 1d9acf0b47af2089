/**
 * Review 131's probe: two consumers on one shared connection; the broker takes one consumer's
 * channel (its queue deleted, declared by nobody: every re-attach finds none). check() of that one
 * names its channel with the connection up, never "connected" while its queue is gone; the other
 * stays attached on the same connection and consumes; the first recovers once its queue is back.
 * Passes on main. Real broker, real PostgreSQL.
 */
import { attachRabbitConsumer, deleteWorkQueue } from '@ferry/rabbitmq';
import { checkFailure, consumerCount, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

const f = useConsumerFixture();

test('one consumer of a shared connection loses its channel: the other is unaffected', async () => {
  await f.broker.channel.assertQueue(f.queue, { durable: true });
  const losing = await f.attach({ declareTopology: false });
  const other = attachRabbitConsumer(f.acceptor, {
    connection: f.connection,
    queue: uniqueName('other'),
    consumer: 'billing',
  });
  try {
    await other.ready({ timeoutMs: 20_000 });
    const model = f.connection.current;

    await f.broker.channel.deleteQueue(f.queue);
    const reason = await waitFor('check() down with the missing queue', async () => {
      const message = await checkFailure(losing);
      return message !== undefined && /NOT_FOUND/.test(message) ? message : undefined;
    });
    expect(reason).toContain('it lost its channel (its connection is up)');
    // Through its failing re-attaches: never attached while its queue is missing.
    for (let probe = 0; probe < 20; probe += 1) {
      expect(await checkFailure(losing)).toContain('lost its channel');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect(other.check()).resolves.toBeUndefined();
    expect(f.connection.current).toBe(model);
    f.broker.channel.sendToQueue(other.names.queue, Buffer.from('{"n":1}'), { messageId: 'to-other' });
    await f.expectStoredOnce(['to-other']);

    await f.broker.channel.assertQueue(f.queue, { durable: true });
    await waitFor('the queue consumed again', async () =>
      (await consumerCount(f.queue)) === 1 && (await checkFailure(losing)) === undefined ? true : undefined,
    );
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":2}'), { messageId: 'back' });
    await f.expectStoredOnce(['to-other', 'back']);
    expect(f.connection.current).toBe(model);
  } finally {
    await other.close();
    await deleteWorkQueue(f.broker.channel, {
      queue: other.names.queue,
      retryTiersMs: other.names.retryTiersMs,
    });
    await f.broker.channel.deleteQueue(f.queue);
  }
});
