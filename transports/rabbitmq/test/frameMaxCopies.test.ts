/**
 * review13: a delivery whose headers fit the consumer connection's frame_max (the broker sent
 * it) but whose dead-letter copy, with ferry's x-ferry-reject-reason and x-ferry-reject-detail
 * added, does not. copyOptions bounds a copy's header table by amqplib's 64 KiB scratch buffer
 * only, not by the negotiated frame size (a `frameMax` in the URL, or a broker's smaller
 * `frame_max`); RabbitMQ closes the connection (FRAME_ERROR) at the copy, every unacked
 * delivery of the prefetch window is redelivered, the poison delivery is dead-lettered again,
 * and the connection closes again: for ever. Its neighbour, a valid message right behind it,
 * must still reach the inbox and the poison delivery end in the dead-letter queue.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { RabbitConnection, attachRabbitConsumer, declareWorkQueue, deleteWorkQueue } from '@ferry/rabbitmq';
import pino from 'pino';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { AMQP_URL, uniqueName, waitFor } from './support/broker';
import { useCopyFixture } from './support/copyFixture';

const fixture = useCopyFixture();

test('Review finding (failed first): a delivery whose dead-letter copy exceeds frame_max does not stall its neighbour', async () => {
  const { broker } = fixture;
  const acceptor = await PgTestAcceptor.create(fixture.database.db);
  const queue = uniqueName('review13-framemax-dlq');
  await declareWorkQueue(broker.channel, { queue });
  const connection = new RabbitConnection({
    url: `${AMQP_URL}?frameMax=4096`,
    connectionName: uniqueName('review13-framemax'),
    reconnectBackoff: { initialMs: 50, maxMs: 200 },
  });
  const events: TransportConsumerEvent[] = [];
  const consumer = attachRabbitConsumer(acceptor, {
    connection,
    queue,
    consumer: 'billing',
    declareTopology: false,
    logger: pino({ level: 'silent' }),
    retryBackoff: { initialMs: 100, maxMs: 200 },
    observer: (event) => events.push(event),
  });
  try {
    await consumer.ready({ timeoutMs: 20_000 });
    // No messageId: dead-lettered as missing_identity. Its headers fit a 4,096-byte frame.
    broker.channel.sendToQueue(queue, Buffer.from('{"n":1}'), {
      contentType: 'application/json',
      headers: { 'x-large': 'a'.repeat(4_000) },
    });
    broker.channel.sendToQueue(queue, Buffer.from('{"n":2}'), {
      contentType: 'application/json',
      messageId: 'neighbour',
    });
    const settled = await waitFor(
      'the neighbour stored and the poison delivery dead-lettered',
      async () => {
        const stored = await acceptor.storedIds();
        const deadLetters = await broker.readyCount(`${queue}.dlq`);
        return stored.length === 1 && deadLetters === 1 ? { stored, deadLetters } : undefined;
      },
      15_000,
    ).catch(async () => ({
      stored: await acceptor.storedIds(),
      deadLetters: await broker.readyCount(`${queue}.dlq`),
      work: await broker.readyCount(queue),
      events: Object.fromEntries(
        [...new Set(events.map((event) => event.type))].map((type) => [
          type,
          events.filter((event) => event.type === type).length,
        ]),
      ),
    }));
    expect(settled).toEqual({ stored: ['neighbour'], deadLetters: 1 });
  } finally {
    await consumer.close();
    await connection.close();
    await deleteWorkQueue(broker.channel, { queue });
  }
}, 90_000);
