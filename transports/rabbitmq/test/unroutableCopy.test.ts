/**
 * The consumer's copies (retry tier, dead letter) are published `mandatory`: a copy no queue
 * takes is returned by the broker (which still acks it), and a returned copy is a failed one:
 * the delivery is requeued after the backoff, not acked, and an `error` event names the
 * exchange and routing key. Plausible with `declareTopology: false`: the operator declared the
 * tiers for one `retryBackoff`, the application runs with another, so `<queue>.retry.<ms>ms`
 * does not exist; or no queue is bound to the dead-letter exchange yet. Before, the copy was
 * taken as confirmed and the delivery acked: in no queue and not in the inbox.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { declareWorkQueue } from '@ferry/rabbitmq';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { uniqueName, unackedCount, waitFor } from './support/broker';
import { FailOnce, attachUndeclared, useCopyFixture } from './support/copyFixture';

const fixture = useCopyFixture();

test('a retry copy to a tier queue that does not exist does not lose the delivery', async () => {
  const { broker } = fixture;
  const inner = await PgTestAcceptor.create(fixture.database.db);
  const acceptor = new FailOnce(inner);
  const queue = uniqueName('review3-unroutable');
  const events: TransportConsumerEvent[] = [];
  // The operator's topology: tiers of 100 and 200 ms.
  await declareWorkQueue(broker.channel, { queue, retryTiersMs: [100, 200] });
  // The application: declareTopology false, default retryBackoff (tiers 1000 ... 16000 ms).
  const attached = attachUndeclared(
    broker,
    acceptor,
    { queue, connectionPrefix: 'review3', operatorTiersMs: [100, 200] },
    { observer: (event) => events.push(event) },
  );
  try {
    await attached.consumer.ready({ timeoutMs: 20_000 });
    broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
      messageId: 'm1',
      contentType: 'application/json',
    });
    await waitFor('the first (failing) acceptance', async () => (acceptor.calls >= 1 ? true : undefined));
    const where = async () => ({
      stored: (await inner.storedIds()).length,
      work: (await broker.readyCount(queue)) + ((await unackedCount(queue)) ?? 0),
      deadLetters: await broker.readyCount(`${queue}.dlq`),
      tiers:
        (await broker.readyCount(`${queue}.retry.100ms`)) + (await broker.readyCount(`${queue}.retry.200ms`)),
    });
    // Wait until the delivery is somewhere again, or has been gone from everywhere for a while.
    let goneSeen = 0;
    await waitFor(
      'the delivery to be found again, or gone',
      async () => {
        const now = await where();
        const found = now.stored + now.work + now.deadLetters + now.tiers > 0;
        goneSeen = found ? 0 : goneSeen + 1;
        return found && acceptor.calls >= 2 ? true : goneSeen >= 5 ? true : undefined;
      },
      60_000,
    );
    expect({ ...(await where()), acceptCalls: acceptor.calls }).toEqual({
      stored: 1,
      work: 0,
      deadLetters: 0,
      tiers: 0,
      acceptCalls: 2,
    });
    expect(events.filter((event) => event.type === 'error')).toEqual([
      expect.objectContaining({
        source: queue,
        error: expect.stringContaining(`exchange "", routing key "${queue}.retry.1000ms"`),
      }),
    ]);
  } finally {
    await attached.close();
  }
}, 90_000);

test('a dead-letter copy no queue takes leaves the delivery in the work queue until one is bound', async () => {
  const { broker } = fixture;
  const acceptor = await PgTestAcceptor.create(fixture.database.db);
  const queue = uniqueName('review3-unroutable-dlx');
  const events: TransportConsumerEvent[] = [];
  // The operator's topology: the dead-letter exchange exists, its queue is not bound to it yet.
  await declareWorkQueue(broker.channel, { queue });
  await broker.channel.unbindQueue(`${queue}.dlq`, `${queue}.dlx`, '');
  const attached = attachUndeclared(
    broker,
    acceptor,
    { queue, connectionPrefix: 'review3' },
    { retryBackoff: { initialMs: 100, maxMs: 200 }, observer: (event) => events.push(event) },
  );
  try {
    await attached.consumer.ready({ timeoutMs: 20_000 });
    // No messageId and no identity extractor: dead-lettered as missing_identity.
    broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), { contentType: 'application/json' });
    const returned = () => events.filter((event) => event.type === 'error');
    await waitFor('two returned dead-letter copies', () => (returned().length >= 2 ? true : undefined));
    expect(returned()[0]).toMatchObject({
      source: queue,
      error: expect.stringContaining(`exchange "${queue}.dlx", routing key "${queue}"`),
    });
    expect(events.filter((event) => event.type === 'dead-lettered')).toEqual([]);
    expect(await broker.readyCount(`${queue}.dlq`)).toBe(0);
    await broker.channel.bindQueue(`${queue}.dlq`, `${queue}.dlx`, '');
    await waitFor('the dead letter', async () =>
      (await broker.readyCount(`${queue}.dlq`)) === 1 ? true : undefined,
    );
    await waitFor('the work queue empty', async () =>
      (await broker.readyCount(queue)) + (await unackedCount(queue)) === 0 ? true : undefined,
    );
    expect(events.filter((event) => event.type === 'dead-lettered')).toHaveLength(1);
  } finally {
    await attached.close();
  }
}, 60_000);
