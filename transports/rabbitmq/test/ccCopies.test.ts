/**
 * Review finding (failed first; 956de6c, the `mandatory` copies of batch.ts): copyHeaders keeps a delivery's
 * `CC` header (it drops only x-death). RabbitMQ reads CC at publish time (sender-selected
 * distribution) and routes the copy to each CC routing key as well, on the copy's exchange. The
 * retry copy goes to the default exchange, so CC ["x"] delivers it to the queue named "x":
 * - the copy is routed, so it is never returned: `mandatory` no longer tells ferry that the
 *   tier queue does not exist, the copy is `confirmed`, the delivery acked, and the message is
 *   in another application's queue instead of the inbox (the returns fix is bypassed);
 * - with the tier queue present, every retry (and dead-letter) copy also lands in the CC
 *   queues: duplicates to whoever the original sender named, on an exchange it never chose.
 * A sender used CC on its own exchange (a legitimate AMQP feature); ferry must not replay it on
 * the default exchange or the dead-letter exchange. Fix: strip CC and BCC in copyHeaders.
 */
import { declareWorkQueue } from '@ferry/rabbitmq';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { uniqueName, waitFor } from './support/broker';
import { FailOnce, attachUndeclared, useCopyFixture } from './support/copyFixture';

const fixture = useCopyFixture();

test('a retry copy of a delivery with a CC header goes to the tier only, and a missing tier is still noticed', async () => {
  const { broker } = fixture;
  const inner = await PgTestAcceptor.create(fixture.database.db);
  const acceptor = new FailOnce(inner);
  const queue = uniqueName('review6-cc');
  const victim = uniqueName('review6-cc-victim');
  // The operator's tiers differ from the application's (as in unroutableCopy.test.ts).
  await declareWorkQueue(broker.channel, { queue, retryTiersMs: [100, 200] });
  // Published with CC naming a key no queue had then: the original reaches only `queue`.
  broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
    messageId: 'm-cc',
    contentType: 'application/json',
    headers: { CC: [victim] },
  });
  await broker.channel.assertQueue(victim, { durable: false, autoDelete: false });
  const attached = attachUndeclared(broker, acceptor, {
    queue,
    connectionPrefix: 'review6',
    operatorTiersMs: [100, 200],
  });
  try {
    await attached.consumer.ready({ timeoutMs: 20_000 });
    await waitFor(
      'the delivery to be stored, or to land in the CC queue',
      async () =>
        (await inner.storedIds()).length > 0 || (await broker.readyCount(victim)) > 0 ? true : undefined,
      60_000,
    );
    // On main: { stored: 0, victim: 1 }: the copy was routed by CC, confirmed, the delivery acked.
    expect({ stored: (await inner.storedIds()).length, victim: await broker.readyCount(victim) }).toEqual({
      stored: 1,
      victim: 0,
    });
  } finally {
    await broker.channel.deleteQueue(victim).catch(() => undefined);
    await attached.close();
  }
}, 90_000);
