/**
 * Review 13 finding: the dead-letter exchange is deleted while the consumer runs (an operator's cleanup, a
 * topology redeploy). batch.ts copyTo publishes the dead-letter copy on the delivery's own
 * consumer channel; RabbitMQ answers a publish to a missing exchange by closing that channel
 * (404 NOT_FOUND), so every unacked delivery of the prefetch window is redelivered, the poison
 * delivery is dead-lettered again on the new channel, which closes again: a loop for as long as
 * the exchange is missing, in which a valid neighbour is redelivered again and again and
 * `dead-lettered` is reported for a copy that went nowhere. The neighbour must be accepted once
 * and acked (out of the work queue), the poison delivery held (as a returned copy is) without a
 * `dead-lettered` event.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { declareWorkQueue } from '@ferry/rabbitmq';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { uniqueName, unackedCount, waitFor } from './support/broker';
import { attachUndeclared, useCopyFixture } from './support/copyFixture';

const fixture = useCopyFixture();

test('Review finding (failed first): a dead-letter exchange deleted while consuming does not loop the channel nor stall a neighbour', async () => {
  const { broker } = fixture;
  const acceptor = await PgTestAcceptor.create(fixture.database.db);
  const queue = uniqueName('r13-no-dlx');
  const events: TransportConsumerEvent[] = [];
  await declareWorkQueue(broker.channel, { queue });
  const attached = attachUndeclared(
    broker,
    acceptor,
    { queue, connectionPrefix: 'review13' },
    { retryBackoff: { initialMs: 100, maxMs: 200 }, observer: (event) => events.push(event) },
  );
  try {
    await attached.consumer.ready({ timeoutMs: 20_000 });
    await broker.channel.deleteExchange(`${queue}.dlx`);
    // No messageId: dead-lettered as missing_identity; then a valid neighbour.
    broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), { contentType: 'application/json' });
    broker.channel.sendToQueue(queue, Buffer.from('{"n":2}'), {
      contentType: 'application/json',
      messageId: 'neighbour',
    });
    const count = (type: string) => events.filter((event) => event.type === type).length;
    const state = async () => ({
      stored: await acceptor.storedIds(),
      work: (await broker.readyCount(queue)) + ((await unackedCount(queue)) ?? 0),
      received: count('received'),
      deadLettered: count('dead-lettered'),
    });
    // Settled: the neighbour stored and out of the work queue, only the poison delivery left.
    const settled = await waitFor(
      'the neighbour acked, only the poison delivery left in the work queue',
      async () => {
        const now = await state();
        return now.stored.length === 1 && now.work === 1 ? now : undefined;
      },
      15_000,
    ).catch(state);
    expect(settled).toMatchObject({ stored: ['neighbour'], work: 1, deadLettered: 0 });
    expect(settled.received).toBeLessThan(50);
  } finally {
    await attached.close();
  }
}, 90_000);
