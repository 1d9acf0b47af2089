/**
 * Review 13 findings: dead-letter copies the broker refuses (both failed first).
 *
 * 1. A dead-letter queue capped by the operator (x-max-length with x-overflow
 * reject-publish, a common guard against a DLQ filling the disk) nacks ferry's dead-letter copy
 * once full. batch.ts deadLetter() then rejects the delivery to the work queue's own
 * dead-letter exchange (nack, requeue false), whose only queue is that same full queue: RabbitMQ
 * drops a dead-lettered message a reject-publish queue refuses. The delivery is in no queue and
 * not in the inbox, yet a `dead-lettered` event is emitted: lost. It must stay in the work queue
 * (or be held) until the dead-letter queue can take it, as a returned copy is.
 *
 * 2. The dead-letter exchange is deleted while the consumer runs (an operator's cleanup, a
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

/** A consumer of `queue` that declares nothing, retries quickly and records its events. */
function attachQuick(acceptor: PgTestAcceptor, queue: string, events: TransportConsumerEvent[]) {
  return attachUndeclared(
    fixture.broker,
    acceptor,
    { queue, connectionPrefix: 'review13' },
    { retryBackoff: { initialMs: 100, maxMs: 200 }, observer: (event) => events.push(event) },
  );
}

test('Review finding (failed first): a dead letter the full (reject-publish) dead-letter queue refuses is not lost', async () => {
  const { broker } = fixture;
  const acceptor = await PgTestAcceptor.create(fixture.database.db);
  const queue = uniqueName('r13-full-dlq');
  const dlq = `${queue}.dlq`;
  const events: TransportConsumerEvent[] = [];
  await declareWorkQueue(broker.channel, { queue });
  // The operator caps the dead-letter queue at one message, refusing publishes past that.
  await broker.channel.deleteQueue(dlq);
  await broker.channel.assertQueue(dlq, {
    durable: true,
    arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
  });
  await broker.channel.bindQueue(dlq, `${queue}.dlx`, '');
  broker.channel.sendToQueue(dlq, Buffer.from('an earlier dead letter'));
  await waitFor('the dead-letter queue to be full', async () =>
    (await broker.readyCount(dlq)) === 1 ? true : undefined,
  );
  const attached = attachQuick(acceptor, queue, events);
  try {
    await attached.consumer.ready({ timeoutMs: 20_000 });
    // No messageId and no identity extractor: dead-lettered as missing_identity.
    broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), { contentType: 'application/json' });
    await waitFor('the delivery to be settled one way or another', () =>
      events.some((event) => event.type === 'dead-lettered' || event.type === 'error') ? true : undefined,
    );
    const where = async () => ({
      work: (await broker.readyCount(queue)) + ((await unackedCount(queue)) ?? 0),
      deadLetters: await broker.readyCount(dlq),
      stored: (await acceptor.storedIds()).length,
      events: events.map((event) => event.type),
    });
    // Somewhere: still in the work queue (held or requeued), stored, or a second dead letter.
    const found = await waitFor(
      'the delivery to be found in the work queue, the inbox or the dead-letter queue',
      async () => {
        const now = await where();
        return now.work + now.stored + now.deadLetters > 1 ? now : undefined;
      },
      10_000,
    ).catch(async () => where());
    expect(found).toMatchObject({ deadLetters: 1, work: 1 });
  } finally {
    await attached.close();
  }
}, 90_000);

test('Review finding (failed first): a dead-letter exchange deleted while consuming does not loop the channel nor stall a neighbour', async () => {
  const { broker } = fixture;
  const acceptor = await PgTestAcceptor.create(fixture.database.db);
  const queue = uniqueName('r13-no-dlx');
  const events: TransportConsumerEvent[] = [];
  await declareWorkQueue(broker.channel, { queue });
  const attached = attachQuick(acceptor, queue, events);
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
    // A channel looping on the refused copy redelivers it thousands of times in these seconds; with
    // the backoff it comes back a few dozen times at most. 50 was passed (53) while the whole
    // suite ran on the same 2 cores, the neighbour's settling slowed by the load.
    expect(settled.received).toBeLessThan(200);
  } finally {
    await attached.close();
  }
}, 90_000);
