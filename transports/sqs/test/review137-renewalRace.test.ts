/**
 * Review 137: the visibility renewal of a batch races the settle of its messages. A renewal
 * (ChangeMessageVisibilityBatch of the messages still held) in flight when the acceptance answers
 * was sent next to their delete, on another socket: landing after it, SQS answered
 * ReceiptHandleIsInvalid for each deleted message, reported as an `error` event though nothing
 * failed; landing after a visibility change of the settle (the retry backoff of a message held
 * behind its group), it put the visibility timeout back in place of the backoff. The settle now
 * waits for the renewal in flight (bounded by its extendEveryMs deadline) before it changes them.
 */
import { expect, it, jest } from '@jest/globals';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { attachSqsConsumer, SqsConnection } from '@ferry/sqs';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { SQS_ENDPOINT, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

failOnUnhandledRejections();
jest.setTimeout(30_000);

const fixture = useSqsQueuesFixture();

/** Resolves at `promise`, or after `ms` at the latest. */
const atMost = (promise: Promise<unknown>, ms: number): Promise<unknown> =>
  Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);

it('a renewal in flight as the batch is accepted lands before its delete: no ReceiptHandleIsInvalid error', async () => {
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName('renew-race') });
  // Each renewal reaches SQS only once the batch's delete answered (at most 600 ms later: it
  // stays well within its 2 s extendEveryMs deadline); the acceptance answers while one is in flight.
  let renewalSent: () => void = () => undefined;
  const renewalInFlight = new Promise<void>((resolve) => (renewalSent = resolve));
  let deleteAnswered: () => void = () => undefined;
  const deleted = new Promise<void>((resolve) => (deleteAnswered = resolve));
  const client = new SQSClient({
    endpoint: SQS_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ChangeMessageVisibilityBatchCommand') {
        renewalSent();
        await atMost(deleted, 600);
      }
      const output = await next(args);
      if (context.commandName === 'DeleteMessageBatchCommand') deleteAnswered();
      return output;
    },
    { step: 'finalizeRequest', name: 'review137Order' },
  );
  const connection = new SqsConnection({ client });
  fixture.opened.push(connection);
  const inner = traceRecordingAcceptor();
  const acceptor = {
    maxPayloadBytes: inner.maxPayloadBytes,
    accepted: inner.accepted,
    async acceptMany(inputs: Parameters<typeof inner.acceptMany>[0]) {
      await renewalInFlight;
      return inner.acceptMany(inputs);
    },
  };
  const events: TransportConsumerEvent[] = [];
  const consumer = attachSqsConsumer(acceptor, {
    connection,
    queueUrl,
    consumer: 'billing',
    waitTimeSeconds: 1,
    visibilityTimeoutSeconds: 3,
    extendEveryMs: 2_000,
    observer: (event) => void events.push(event),
  });
  fixture.consumers.push(consumer);
  await consumer.ready();
  await sendRaw(fixture.connection, queueUrl, '{"n":1}');
  await waitFor('the message settled', () => (events.some((e) => e.type === 'settled') ? true : undefined));
  // The renewal's answer, had it come after the delete, is in by now.
  await new Promise((resolve) => setTimeout(resolve, 700));
  expect(inner.accepted).toHaveLength(1);
  expect(events.filter((e) => e.type === 'error')).toEqual([]);
  client.destroy();
});
