/**
 * `deadLetter: { mode: 'redrive' }` relies on the queue's RedrivePolicy, and on the dead-letter
 * queue it names, for as long as the consumer runs, not only at attach: each time invalid
 * messages are left to the policy it is read again. A policy gone (or its dead-letter queue
 * gone) is a FERRY_CONFIG_INVALID `error` event and an error log, never a `dead-lettered` event
 * for a message SQS will not move; the message stays in the queue.
 */
import { describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS, FerryConfigError } from '@ferry/core';
import { attachSqsConsumer, deleteQueue, type AttachConsumerOptions, type SqsConsumer } from '@ferry/sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import pino from 'pino';
import { PgTestAcceptor } from '../../../test-support/pgAcceptor';
import { receiveAtLeast, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('SQS redrive mode while the consumer runs', () => {
  const f = useSqsConsumerFixture();
  const lines: { level: number; msg: string }[] = [];

  function attach(
    acceptor: PgTestAcceptor,
    queueUrl: string,
    extra: Partial<AttachConsumerOptions> = {},
  ): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
    const events: TransportConsumerEvent[] = [];
    const options: AttachConsumerOptions = {
      connection: f.connection,
      queueUrl,
      consumer: 'redrive',
      deadLetter: { mode: 'redrive' },
      waitTimeSeconds: 1,
      // Longer than the long poll (1 s) close() aborts: that poll cannot take the message back.
      retryBackoff: { initialMs: 3_000, maxMs: 3_000, jitter: 'none' },
      reconnectBackoff: { initialMs: 20, maxMs: 20, jitter: 'none' },
      observer: (event) => events.push(event),
      logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
      ...extra,
    };
    const consumer = attachSqsConsumer(acceptor, options);
    f.consumers.push(consumer);
    return { consumer, events };
  }

  it('reports a RedrivePolicy removed after attach instead of a dead-lettered event, and keeps the message', async () => {
    const acceptor = await f.freshAcceptor();
    const name = uniqueName('removed');
    const { queueUrl } = await f.queues.declare({ name, deadLetter: { maxReceiveCount: 2 } });
    // ElasticMQ leaves a long poll of a deleted queue unanswered: the poll's deadline (wait +
    // visibility timeout) ends it, kept short here.
    const { consumer, events } = attach(acceptor, queueUrl, { visibilityTimeoutSeconds: 4 });
    await consumer.ready();
    // ElasticMQ cannot unset a RedrivePolicy: the queue is made again without one (same URL).
    await deleteQueue(f.connection, queueUrl);
    await f.queues.declareBare({ name });
    lines.length = 0;
    await sendRaw(f.connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'removed-1' });

    const failed = await waitFor('an error event about the policy', () =>
      events.find((e) => e.type === 'error' && e.error.includes('RedrivePolicy')),
    );
    expect(failed).toMatchObject({
      error: expect.stringMatching(/^FERRY_CONFIG_INVALID: .*has no RedrivePolicy/),
    });
    expect(lines.filter((l) => l.level >= 50 && l.msg.includes('RedrivePolicy'))).not.toEqual([]);
    await consumer.close();
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
    const [kept] = await receiveAtLeast(f.connection, queueUrl, 1);
    expect(kept!.MessageAttributes?.[FERRY_HEADERS.messageId]?.StringValue).toBe('removed-1');
  });

  it('reports the dead-letter queue of the RedrivePolicy deleted after attach instead of a dead-lettered event', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl, deadLetterQueueUrl } = await f.queues.declare({
      name: uniqueName('target-gone'),
      deadLetter: { maxReceiveCount: 5 },
    });
    const { consumer, events } = attach(acceptor, queueUrl);
    await consumer.ready();
    await deleteQueue(f.connection, deadLetterQueueUrl!);
    await sendRaw(f.connection, queueUrl, 'not json', { [FERRY_HEADERS.messageId]: 'target-1' });

    const failed = await waitFor('an error event about the policy', () =>
      events.find((e) => e.type === 'error' && e.error.includes('RedrivePolicy')),
    );
    expect(failed).toMatchObject({ error: expect.stringMatching(/^FERRY_CONFIG_INVALID: .*does not exist/) });
    await consumer.close();
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
  });

  it('refuses to attach when the dead-letter queue of the RedrivePolicy does not exist', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl, deadLetterQueueUrl } = await f.queues.declare({
      name: uniqueName('target-missing'),
      deadLetter: { maxReceiveCount: 5 },
    });
    await deleteQueue(f.connection, deadLetterQueueUrl!);
    const { consumer, events } = attach(acceptor, queueUrl);
    const failure = await consumer.ready().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(FerryConfigError);
    expect(failure).toMatchObject({
      option: 'deadLetter',
      message: expect.stringContaining('does not exist'),
    });
    expect(events.filter((e) => e.type === 'received')).toEqual([]);
  });
});
