/**
 * Review 130: check() of a consumer that lost only its channel (the broker closed it: its queue
 * deleted under it, a precondition failed) while its connection stayed up. It said "it lost its
 * connection and has not re-attached", sending an operator to look at the network and the broker's
 * connections; its reason now says the channel was lost and the connection is up, and says the
 * connection once that goes too. Recovery follows on the same connection. Real broker, real
 * PostgreSQL.
 */
import { checkFailure, closeConnectionsNamed, consumerCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

const f = useConsumerFixture();

test('a channel lost while the connection lives: check() names the channel, then the connection once that is lost too; it recovers on the same connection', async () => {
  await f.broker.channel.assertQueue(f.queue, { durable: true });
  const consumer = await f.attach({ declareTopology: false });
  const model = f.connection.current;
  expect(model).not.toBeNull();

  // The queue deleted under the consumer: the broker cancels it, every re-attach finds no queue.
  await f.broker.channel.deleteQueue(f.queue);
  const reason = await waitFor('check() down with the missing queue', async () => {
    const message = await checkFailure(consumer);
    return message !== undefined && /NOT_FOUND/.test(message) ? message : undefined;
  });
  expect(reason).toContain('it lost its channel (its connection is up) and has not re-attached');
  expect(reason).not.toContain('lost its connection');
  expect(f.connection.current).toBe(model);

  // The connection goes too: check() says so.
  expect(await closeConnectionsNamed(f.connectionName)).toBe(1);
  const lost = await waitFor('check() names the connection', async () => {
    const message = await checkFailure(consumer);
    return message?.includes('lost its connection') ? message : undefined;
  });
  expect(lost).not.toContain('lost its channel');

  // The queue is back: the consumer re-attaches and consumes.
  await waitFor('a new connection', () =>
    f.connection.current !== null && f.connection.current !== model ? true : undefined,
  );
  await f.broker.channel.assertQueue(f.queue, { durable: true });
  await waitFor('check() up again', async () =>
    (await checkFailure(consumer)) === undefined ? true : undefined,
  );
  f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'after-channel-loss' });
  await f.expectStoredOnce(['after-channel-loss']);
  await f.broker.channel.deleteQueue(f.queue);
});

test('a channel lost and re-attached on the same connection: check() is up again and deliveries flow', async () => {
  const consumer = await f.attach();
  const model = f.connection.current;
  // Declared by the consumer: its re-attach declares the deleted queue again.
  await f.broker.channel.deleteQueue(f.queue);
  await waitFor('the queue declared again and consumed', async () =>
    (await consumerCount(f.queue)) === 1 ? true : undefined,
  );
  await waitFor('check() up', async () => ((await checkFailure(consumer)) === undefined ? true : undefined));
  expect(f.connection.current).toBe(model);
  f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":2}'), { messageId: 'after-redeclare' });
  await f.expectStoredOnce(['after-redeclare']);
});
