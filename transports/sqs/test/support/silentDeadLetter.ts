import pino from 'pino';
import type { InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, SqsConnection, type ConsumerOptions, type SqsConsumer } from '@ferry/sqs';
import { TcpProxy } from '../../../../fault-tests/harness/tcpProxy';
import type { SqsQueuesFixture } from './queuesFixture';
import { SQS_ENDPOINT, perQueueHostClient, sendRawBatch, uniqueName, waitFor } from './sqs';

/** A consumer whose received batch has its dead-letter copies go unanswered (silentDeadLetter). */
export interface SilentDeadLetterBatch {
  readonly consumer: SqsConsumer;
  readonly events: readonly TransportConsumerEvent[];
  readonly queueUrl: string;
}

/**
 * Sends `bodies` as one batch to a fresh queue, attaches a consumer `billing` of `acceptor` (1 s
 * polls, `options` on top) whose dead-letter queue goes silent once checked at attach (its
 * requests through a TCP proxy, the queue's straight to ElasticMQ), waits until it received the
 * batch, and runs `run`; the consumer is closed after it.
 */
export async function withSilentDeadLetterQueue<T>(
  fixture: SqsQueuesFixture,
  acceptor: InboxAcceptor,
  bodies: readonly string[],
  options: Partial<ConsumerOptions>,
  run: (batch: SilentDeadLetterBatch) => Promise<T>,
): Promise<T> {
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('sdl') });
  const { queueUrl: deadUrl } = await fixture.queues.declareBare({ name: uniqueName('sdl-dead') });
  const endpoint = new URL(SQS_ENDPOINT);
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  const client = perQueueHostClient();
  try {
    await sendRawBatch(fixture.connection, queueUrl, bodies);
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: new SqsConnection({ client }),
      queueUrl,
      consumer: 'billing',
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: proxy.urlFor(deadUrl).replace(/\/$/, '') },
      logger: pino({ level: 'silent' }),
      ...options,
      observer: (event) => {
        events.push(event);
        // The dead-letter queue goes silent once checked at attach, before the first poll.
        if (event.type === 'connected') void proxy.setMode('blackhole');
      },
    });
    fixture.consumers.push(consumer);
    await waitFor('the messages received in one batch', () =>
      events.some((e) => e.type === 'received' && e.count === bodies.length) ? true : undefined,
    );
    return await run({ consumer, events, queueUrl });
  } finally {
    await Promise.all(fixture.consumers.splice(0).map((c) => c.close()));
    client.destroy();
    await proxy.close();
  }
}
