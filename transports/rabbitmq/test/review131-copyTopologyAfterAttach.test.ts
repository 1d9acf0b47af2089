/**
 * Review 131's probe of review 130's declare-once: the copy channel an attach opens no longer
 * declares the topology the attach just declared. The dead-letter exchange deleted between the
 * attach and the first dead-letter copy (an operator's cleanup): the copy the broker refuses (404
 * closes the copy channel) is not reported, the delivery comes back after the backoff, and the copy
 * channel opened then declares the exchange again: the delivery reaches the dead-letter queue once,
 * one `dead-lettered` event, nothing lost, its valid neighbour stored once. Passes on main. Real
 * broker, real PostgreSQL.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { exchangeExists } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

const f = useConsumerFixture();

test('a dead-letter exchange deleted after the attach: the first dead letter reaches the dead-letter queue once', async () => {
  const events: TransportConsumerEvent['type'][] = [];
  const consumer = await f.attach({ observer: (event) => void events.push(event.type) });
  await f.broker.channel.deleteExchange(consumer.names.deadLetterExchange);
  expect(await exchangeExists(consumer.names.deadLetterExchange)).toBe(false);

  await f.poisonAndNeighbour('unparseable', 'neighbour');
  expect(events.filter((type) => type === 'dead-lettered')).toEqual(['dead-lettered']);
  expect(await exchangeExists(consumer.names.deadLetterExchange)).toBe(true);
  await expect(consumer.check()).resolves.toBeUndefined();
});
