/**
 * Review 72 (SQS end to end), failing on main.
 *
 * What I did: a deploy attaches the consumer before its queue exists (the README: "the consumer
 * keeps trying: the queue may be created"), with an observer that logs each (re)start of consuming
 * (`connected`: "Consuming (re)started", @ferry/core's TransportConsumerEvent) and each stop
 * (`disconnected`). The queue is created a moment later and a message goes through.
 *
 * What happened: one start is reported twice: `disconnected, connected, connected`. The loop
 * (consumer.ts, run()) emits `connected` when the queue check first succeeds (`!started`) and again
 * after the first successful poll because `failures`, counted by the failed queue checks before,
 * is still above 0. An observer counting reconnects (or alerting on flapping) sees two starts for
 * one; the README says `connected` comes once "when ready() resolves; again at the first answer
 * after failed polls", and no poll had failed.
 *
 * What should happen: exactly one `connected` for the one start, after the failed attempts.
 */
import { describe, expect, it } from '@jest/globals';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, deleteQueue } from '@ferry/sqs';
import pino from 'pino';
import { sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

describe('review72: the events of a consumer attached before its queue exists', () => {
  const f = useSqsConsumerFixture();

  it('reports the one start of consuming once: disconnected while the queue is missing, then one connected', async () => {
    const acceptor = await f.freshAcceptor();
    const name = uniqueName('r72-late');
    const { queueUrl: deadUrl } = await f.queues.declareBare({ name: uniqueName('r72-late-dead') });
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: f.connection,
      consumer: 'orders',
      queueUrl: name,
      waitTimeSeconds: 1,
      deadLetter: { mode: 'queue', queueUrl: deadUrl },
      reconnectBackoff: { initialMs: 50, maxMs: 200, jitter: 'none' },
      logger: pino({ level: 'silent' }),
      observer: (event) => void events.push(event),
    });
    f.consumers.push(consumer);
    await waitFor('a failed attach', () =>
      events.some((e) => e.type === 'disconnected') ? true : undefined,
    );

    const { QueueUrl } = await f.connection.client.send(new CreateQueueCommand({ QueueName: name }));
    try {
      await sendRaw(f.connection, QueueUrl!, '{"n":1}', { [FERRY_HEADERS.messageId]: `${name}-1` });
      // Stored and deleted: the consumer's first poll has answered by then.
      await waitFor('the message settled', () =>
        events.some((e) => e.type === 'settled') ? true : undefined,
      );
      await consumer.close();
      const lifecycle = events
        .map((e) => e.type)
        .filter((type) => type === 'connected' || type === 'disconnected');
      const failedAttaches = lifecycle.indexOf('connected');
      expect(failedAttaches).toBeGreaterThan(0);
      expect(lifecycle.slice(failedAttaches)).toEqual(['connected', 'disconnected']);
      expect(await acceptor.storedIds()).toEqual([`${name}-1`]);
    } finally {
      await deleteQueue(f.connection, QueueUrl!);
    }
  });
});
