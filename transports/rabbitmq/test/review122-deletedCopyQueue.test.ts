/**
 * Review 122: a queue of the consumer's own topology deleted while it runs (an operator's cleanup
 * of the dead-letter queue, a redeploy dropping the retry tier queues). The consumer declares its
 * topology (declareTopology, the default) and restored a deleted work queue (re-attach) and a
 * deleted dead-letter exchange (the broker closes the copy channel: the next one declares it), but
 * not a deleted dead-letter or retry tier queue: the exchange stayed, so each copy came back
 * unroutable (312 NO_ROUTE) on a channel that stayed open, and every delivery to dead-letter (or
 * to retry) was requeued for ever, one `error` event per retry backoff, until the connection
 * happened to be lost. A copy returned unroutable now has the topology declared again before the
 * delivery's next attempt, which then goes to the queue declared anew.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { consumerCount, unackedCount, waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

describe('review122: a queue of the consumer topology deleted while it runs', () => {
  const f = useConsumerFixture();

  it('declares the deleted dead-letter queue again, and dead-letters into it', async () => {
    const events: TransportConsumerEvent[] = [];
    await f.attach({ observer: (event) => events.push(event) });
    const dlq = `${f.queue}.dlq`;
    const invalid = (messageId: string) =>
      f.broker.channel.sendToQueue(f.queue, Buffer.from('not json'), {
        contentType: 'application/json',
        messageId,
      });
    invalid('before-delete');
    expect((await f.settled(1, 20_000)).map((m) => m.properties.messageId)).toEqual(['before-delete']);

    await f.broker.channel.deleteQueue(dlq);
    invalid('after-delete');
    f.broker.channel.sendToQueue(f.queue, Buffer.from('{"n":1}'), { messageId: 'neighbour' });
    const dead = await waitFor('the dead letter in the dead-letter queue declared anew', async () => {
      // A get from a queue that does not exist would close the test's channel (404).
      if ((await consumerCount(dlq)) === undefined) return undefined;
      const got = await f.broker.drain(dlq);
      return got.length > 0 ? got : undefined;
    });
    expect(dead.map((m) => m.properties.messageId)).toEqual(['after-delete']);
    expect(dead[0]!.properties.headers?.['x-ferry-reject-reason']).toBe('unparseable_body');
    await f.expectStoredOnce(['neighbour']);
    await waitFor('nothing left unacked', async () =>
      (await unackedCount(f.queue)) === 0 ? true : undefined,
    );
    // The copy that came back unroutable was reported once, not once per backoff for ever.
    expect(events.filter((e) => e.type === 'error').length).toBeLessThanOrEqual(1);
  }, 60_000);
});
