/**
 * The lifecycle events of a consumer attached before its queue exists (review 72 found SQS's
 * consumer reporting that one start as two `connected`): each failed attach is one `disconnected`
 * with the wait before the next attempt, and the start once the queue exists is one `connected`,
 * followed by nothing but close()'s `disconnected`.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachRabbitConsumer } from '@ferry/rabbitmq';
import pino from 'pino';
import { waitFor } from './support/broker';
import { useConsumerFixture } from './support/consumerFixture';

const fixture = useConsumerFixture();

test('a consumer attached before its queue exists reports each failed attach once and its one start as one connected', async () => {
  const events: TransportConsumerEvent[] = [];
  // The consumer's warn log of each failed attach, with the wait before the next attempt.
  const retries: number[] = [];
  const logger = pino(
    { level: 'warn' },
    {
      write: (line: string) => {
        const entry = JSON.parse(line) as { msg?: string; delay?: number };
        if (entry.msg === 'ferry.rabbitmq: attach failed; retrying') retries.push(entry.delay ?? -1);
      },
    },
  );
  const consumer = attachRabbitConsumer(fixture.acceptor, {
    connection: fixture.connection,
    queue: fixture.queue,
    consumer: 'billing',
    declareTopology: false,
    logger,
    observer: (event) => void events.push(event),
  });
  fixture.consumer = consumer;
  await waitFor('a failed attach', () => (retries.length > 0 ? true : undefined));

  await fixture.broker.channel.assertQueue(fixture.queue, { durable: true });
  fixture.broker.channel.sendToQueue(fixture.queue, Buffer.from('{"n":1}'), { messageId: 'late-1' });
  await fixture.expectStoredOnce(['late-1']);
  await waitFor('the delivery settled', () => (events.some((e) => e.type === 'settled') ? true : undefined));
  await consumer.close();

  const lifecycle = events.filter((e) => e.type === 'connected' || e.type === 'disconnected');
  const failedAttaches = lifecycle.findIndex((e) => e.type === 'connected');
  expect(lifecycle.slice(0, failedAttaches).map((e) => e.type === 'disconnected' && e.retryInMs)).toEqual(
    retries,
  );
  expect(lifecycle.slice(failedAttaches).map((e) => e.type)).toEqual(['connected', 'disconnected']);
});
