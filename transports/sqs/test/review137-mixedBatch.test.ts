/**
 * Review 137: a received batch of 10 with every outcome (accepted, duplicate, answered invalid,
 * acceptance failed alone) whose dead-letter copies SQS does not answer, and close() meanwhile.
 * Review 133 deletes the accepted and duplicate messages before those copies are made, but
 * reported them (`accepted`, `settled`) only after the copies: up to their 30 s deadline later,
 * and never once close() gave up on the batch during the copies (its events end with close()),
 * though they were accepted and deleted. Nothing is lost: the refused messages stay in the queue.
 */
import { expect, it, jest } from '@jest/globals';
import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import pino from 'pino';
import type { InboxAcceptInput, InboxAcceptResult } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, SqsConnection } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { SQS_ENDPOINT, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

failOnUnhandledRejections();
jest.setTimeout(30_000);

const fixture = useSqsQueuesFixture();

/** Answers by the payload's `k`: ok, dup (a duplicate), bad (invalid), boom (its acceptance throws). */
const acceptor = {
  maxPayloadBytes: 256 * 1024,
  async acceptMany(inputs: readonly InboxAcceptInput[]): Promise<readonly InboxAcceptResult[]> {
    const kinds = inputs.map((input) => (input.payload as { k: string }).k);
    if (kinds.includes('boom')) throw new Error('a row PostgreSQL refuses');
    return inputs.map((input, index): InboxAcceptResult => {
      if (kinds[index] === 'dup') return { kind: 'duplicate', record: {} } as unknown as InboxAcceptResult;
      if (kinds[index] === 'bad')
        return { kind: 'invalid', code: 'FERRY_VALIDATION_FAILED', reason: 'refused' };
      return { kind: 'accepted', id: input.messageId } as InboxAcceptResult;
    });
  },
};

/** The messages in the queue, visible or not. */
async function leftIn(queueUrl: string): Promise<number> {
  const { Attributes } = await fixture.connection.client.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages) +
    Number(Attributes?.ApproximateNumberOfMessagesNotVisible)
  );
}

const sum = (events: readonly TransportConsumerEvent[], type: 'accepted' | 'settled'): number =>
  events.reduce((n, e) => n + (e.type === type ? e.count : 0), 0);

it('reports the accepted and duplicate messages of a mixed batch once deleted, before the dead-letter copies of the others; close() loses none', async () => {
  const kinds = ['ok', 'bad', 'ok', 'dup', 'boom', 'ok', 'bad', 'dup', 'boom', 'ok'];
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('mixed') });
  const { queueUrl: deadUrl } = await fixture.queues.declareBare({ name: uniqueName('mixed-dead') });
  await fixture.connection.client.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: kinds.map((k, index) => ({ Id: `m${index}`, MessageBody: JSON.stringify({ k, index }) })),
    }),
  );
  const endpoint = new URL(SQS_ENDPOINT);
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  // No endpoint in code: the dead-letter queue's requests go through the proxy, the queue's
  // straight to ElasticMQ.
  const quiet = () => undefined;
  const client = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
  });
  try {
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection: new SqsConnection({ client }),
      queueUrl,
      consumer: 'billing',
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 60,
      closeTimeoutMs: 300,
      deadLetter: { mode: 'queue', queueUrl: proxy.urlFor(deadUrl).replace(/\/$/, '') },
      logger: pino({ level: 'silent' }),
      observer: (event) => {
        events.push(event);
        // The dead-letter queue goes silent once checked at attach, before the first poll.
        if (event.type === 'connected') void proxy.setMode('blackhole');
      },
    });
    fixture.consumers.push(consumer);
    await waitFor('the messages received in one batch', () =>
      events.some((e) => e.type === 'received' && e.count === kinds.length) ? true : undefined,
    );
    // The accepted and duplicate ones deleted: the four refused stay, their copies unanswered.
    await waitFor('the accepted and duplicate messages deleted', async () =>
      (await leftIn(queueUrl)) === 4 ? true : undefined,
    );
    await consumer.close();
    expect([sum(events, 'accepted'), sum(events, 'settled')]).toEqual([6, 6]);
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
    expect(await leftIn(queueUrl)).toBe(4);
  } finally {
    client.destroy();
    await proxy.close();
  }
});
