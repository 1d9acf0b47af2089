/**
 * Review 13 finding: a dead-letter queue capped by the operator (x-max-length with x-overflow
 * reject-publish, a common guard against a DLQ filling the disk) nacks ferry's dead-letter copy
 * once full. batch.ts deadLetter() then rejects the delivery to the work queue's own
 * dead-letter exchange (nack, requeue false), whose only queue is that same full queue: RabbitMQ
 * drops a dead-lettered message a reject-publish queue refuses. The delivery is in no queue and
 * not in the inbox, yet a `dead-lettered` event is emitted: lost. It must stay in the work queue
 * (or be held) until the dead-letter queue can take it, as a returned copy is.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { declareWorkQueue } from '@ferry/rabbitmq';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { uniqueName, unackedCount, waitFor } from './support/broker';
import { attachUndeclared, useCopyFixture } from './support/copyFixture';

const fixture = useCopyFixture();

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
  const attached = attachUndeclared(
    broker,
    acceptor,
    { queue, connectionPrefix: 'review13' },
    { retryBackoff: { initialMs: 100, maxMs: 200 }, observer: (event) => events.push(event) },
  );
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
