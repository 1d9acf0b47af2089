/**
 * Review 133: the valid neighbours of an invalid message in one received batch stay invisible
 * while it is dead-lettered. The visibility of a batch was renewed during its acceptance only:
 * a dead-letter copy SQS was slow to answer (a dead-letter queue behind a silent network, a large
 * copy over a slow uplink) took up to the visibility timeout, before the acceptance began, so the
 * valid messages became visible and went to another consumer meanwhile (a receive count spent;
 * past the redrive policy's maxReceiveCount moved unoffered).
 */
import { expect, it, jest } from '@jest/globals';
import { ReceiveMessageCommand, SendMessageBatchCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import pino from 'pino';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, SqsConnection } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { SQS_ENDPOINT, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

jest.setTimeout(60_000);

const VISIBILITY_SECONDS = 3;

const fixture = useSqsQueuesFixture();

it('keeps the valid neighbours invisible while the dead-letter copy of an invalid message goes unanswered', async () => {
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('nb') });
  const { queueUrl: deadUrl } = await fixture.queues.declareBare({ name: uniqueName('nb-dead') });
  const endpoint = new URL(SQS_ENDPOINT);
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  // No endpoint in code: each request goes to its queue URL's host, the dead-letter queue's
  // through the proxy, the consumer's queue's straight to ElasticMQ (the SDK's warning about
  // that left out).
  const quiet = () => undefined;
  const client = new SQSClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
  });
  try {
    const connection = new SqsConnection({ client });
    fixture.opened.push(connection);
    await fixture.connection.client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'invalid', MessageBody: 'not json' },
          { Id: 'valid', MessageBody: '{"n":1}' },
        ],
      }),
    );
    const acceptor = traceRecordingAcceptor();
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      connection,
      queueUrl,
      consumer: 'billing',
      waitTimeSeconds: 1,
      maxBatchSize: 10,
      visibilityTimeoutSeconds: VISIBILITY_SECONDS,
      deadLetter: { mode: 'queue', queueUrl: proxy.urlFor(deadUrl).replace(/\/$/, '') },
      logger: pino({ level: 'silent' }),
      observer: (event) => {
        events.push(event);
        // The dead-letter queue goes silent once checked at attach, before the first poll.
        if (event.type === 'connected') void proxy.setMode('blackhole');
      },
    });
    fixture.consumers.push(consumer);
    await waitFor('both messages received in one batch', () =>
      events.some((e) => e.type === 'received' && e.count === 2) ? true : undefined,
    );
    // Another consumer of the queue, polling while the copy goes unanswered.
    const other: Message[] = [];
    const until = Date.now() + (VISIBILITY_SECONDS + 3) * 1000;
    while (Date.now() < until) {
      const output = await fixture.connection.client.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      other.push(...(output.Messages ?? []));
    }
    await waitFor('the valid message accepted', () => (acceptor.accepted.length === 1 ? true : undefined));
    expect(other.map((m) => m.Body)).not.toContain('{"n":1}');
  } finally {
    await Promise.all(fixture.consumers.splice(0).map((c) => c.close()));
    client.destroy();
    await proxy.close();
  }
});
