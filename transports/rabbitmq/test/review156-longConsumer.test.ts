/**
 * Review 156: a consumer runs for months. Nothing it listens to on its connection and channel may
 * grow with the deliveries it took: the most listeners each amqplib emitter held is the same after
 * N deliveries and after 2N.
 */
import { expect, test } from '@jest/globals';
import { useConsumerFixture } from './support/consumerFixture';
import { watchListeners } from './support/listenerWatch';
import { neverAborted, outboxMessages } from './support/messages';

const N = 500;
const fixture = useConsumerFixture();

test(`a consumer's listeners on its connection and channel: the same after ${N} deliveries as after ${2 * N}`, async () => {
  const watch = watchListeners();
  try {
    await fixture.attach({ prefetch: 50 });
    const delivered = async (total: number): Promise<void> => {
      const outcomes = await fixture.publisher.publish(
        outboxMessages(N, { destination: `/${fixture.queue}` }),
        neverAborted(),
      );
      expect(outcomes.filter((outcome) => outcome.status !== 'sent')).toEqual([]);
      await fixture.settled(total, 60_000);
    };
    await delivered(N);
    const afterN = new Map(watch.most);
    await delivered(2 * N);
    expect(new Map(watch.most)).toEqual(afterN);
  } finally {
    watch.stop();
  }
});
