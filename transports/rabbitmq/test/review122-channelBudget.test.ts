/**
 * Review 122: consumers sharing one connection use up its negotiated channelMax at run time. A
 * consumer opened its dead-letter and retry copy channel only at its first copy, so every consumer
 * attached (ready() resolved, check() passed) while the connection could not give some of them
 * that second channel: every delivery they had to dead-letter or retry was requeued for ever, one
 * `error` event per retry backoff ("No channels left to allocate"), and nothing said so at start.
 * A consumer now takes both of its channels before it consumes: the one that finds no channel
 * left is refused at once, ready() rejecting with FERRY_PERMANENT_FAILURE naming channelMax, takes
 * no delivery, and attaches once a channel is free; the consumers attached dead-letter as before.
 */
import { FerryError } from '@ferry/core';
import {
  ChannelsExhaustedError,
  RabbitConnection,
  attachRabbitConsumer,
  deleteWorkQueue,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import { AMQP_URL, uniqueName, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review122: a shared connection without a channel left for a consumer', () => {
  const f = useConsumerFixture();

  it('refuses the consumer that finds no channel left, and keeps the attached ones dead-lettering', async () => {
    // Three channels: one consumer's two, and one more.
    const connection = new RabbitConnection({
      url: `${AMQP_URL}?channelMax=3`,
      connectionName: uniqueName('review122-channels'),
      reconnectBackoff: { initialMs: 50, maxMs: 200 },
    });
    const otherQueue = uniqueName('work');
    let other: RabbitConsumer | null = null;
    try {
      const first = await f.attach({ connection });
      other = attachRabbitConsumer(f.acceptor, {
        connection,
        queue: otherQueue,
        consumer: 'billing',
        retryBackoff: { initialMs: 100, maxMs: 200 },
      });
      const refusal: unknown = await other.ready().then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(FerryError);
      expect(refusal).toMatchObject({ code: 'FERRY_PERMANENT_FAILURE' });
      expect((refusal as Error).message).toMatch(/channelMax 3/);
      // The cause is exported, so an application can tell this refusal from others by its class.
      expect((refusal as Error).cause).toBeInstanceOf(ChannelsExhaustedError);
      await expect(other.check()).rejects.toThrow(/channelMax 3/);

      await f.poisonAndNeighbour('invalid-first', 'valid-first');

      // The refused consumer kept trying: with the first one's channels free, it attaches and
      // dead-letters what it must.
      await first.close();
      const attaching = other;
      await waitFor('the other consumer attached', () =>
        attaching.check().then(
          () => true,
          () => undefined,
        ),
      );
      f.broker.channel.sendToQueue(otherQueue, Buffer.from('not json'), {
        contentType: 'application/json',
        messageId: 'invalid-other',
      });
      const otherDead = await waitFor('dead-lettered by the other consumer', async () => {
        const got = await f.broker.drain(`${otherQueue}.dlq`);
        return got.length > 0 ? got : undefined;
      });
      expect(otherDead.map((m) => m.properties.messageId)).toEqual(['invalid-other']);
    } finally {
      await other?.close();
      await connection.close();
      await deleteWorkQueue(f.broker.channel, {
        queue: otherQueue,
        retryTiersMs: f.consumer!.names.retryTiersMs,
      });
    }
  }, 60_000);
});
