/**
 * Review 133: a long poll SQS does not answer is a failed poll once it is overdue, not after the
 * visibility timeout too. SQS answers a ReceiveMessage by its WaitTimeSeconds; the poll's deadline
 * was waitTimeSeconds + visibilityTimeoutSeconds (up to 12 hours), so a poll left unanswered (a
 * network that went silent, ElasticMQ's poll of a queue deleted under it) held the consumer for
 * that long: nothing received from the queue created again, and check() resolving all along. So
 * did each step settling a batch (deletes, dead-letter copies, visibility changes), up to the
 * visibility timeout: one sent on a socket a network blip left silent held the consumer, polling
 * nothing, that long. Such a step now waits at most 30 s.
 */
import { expect, it, jest } from '@jest/globals';
import { ConsumerDisconnectedError, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import {
  attachSqsConsumer,
  declareQueue,
  deleteQueue,
  type SqsConnection,
  type SqsConsumer,
} from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { SQS_ENDPOINT, proxiedConnection, sendRaw, uniqueName, waitFor } from './support/sqs';
import { useSqsQueuesFixture } from './support/queuesFixture';

jest.setTimeout(90_000);

/** Far less than the visibility timeout, more than the wait of a poll and the grace of its answer. */
const OVERDUE_WITHIN_MS = 15_000;
const VISIBILITY_SECONDS = 600;
/** The 30 s a step settling a batch waits for SQS, with room for a loaded machine; far less than the visibility timeout. */
const SETTLED_WITHIN_MS = 50_000;

const fixture = useSqsQueuesFixture();

/** A consumer `billing` of `queueUrl` (1 s polls, a 600 s visibility timeout) and its events. */
function attach(
  acceptor: InboxAcceptor,
  connection: SqsConnection,
  queueUrl: string,
): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
  const events: TransportConsumerEvent[] = [];
  const consumer = attachSqsConsumer(acceptor, {
    connection,
    queueUrl,
    consumer: 'billing',
    waitTimeSeconds: 1,
    visibilityTimeoutSeconds: VISIBILITY_SECONDS,
    reconnectBackoff: { initialMs: 50, maxMs: 200, jitter: 'none' },
    observer: (event) => void events.push(event),
  });
  fixture.consumers.push(consumer);
  return { consumer, events };
}

/** `test` with a fresh queue and a connection to ElasticMQ through a TCP proxy. */
async function throughProxy(
  prefix: string,
  test: (proxy: TcpProxy, connection: SqsConnection, queueUrl: string) => Promise<void>,
): Promise<void> {
  const { queueUrl } = await fixture.queues.declare({ name: uniqueName(prefix) });
  const endpoint = new URL(SQS_ENDPOINT);
  const proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
  try {
    const connection = proxiedConnection(proxy);
    fixture.opened.push(connection);
    await test(proxy, connection, queueUrl);
  } finally {
    await proxy.close();
  }
}

/** Waits for the consumer's first failed poll. */
const failedPoll = (events: readonly TransportConsumerEvent[]) =>
  waitFor(
    'a failed poll',
    () => (events.some((e) => e.type === 'disconnected') ? true : undefined),
    OVERDUE_WITHIN_MS,
  );

it('a poll of a queue deleted under it fails once overdue; the queue created again is consumed', async () => {
  const name = uniqueName('gone');
  const spec = { name, deadLetter: { maxReceiveCount: 100 } };
  const { queueUrl } = await fixture.queues.declare(spec);
  const acceptor = traceRecordingAcceptor();
  const { consumer, events } = attach(acceptor, fixture.connection, queueUrl);
  await consumer.ready();
  await sendRaw(fixture.connection, queueUrl, '{"n":1}');
  await waitFor('the first message accepted', () => (acceptor.accepted.length === 1 ? true : undefined));

  // The consumer polls without pause (1 s polls): its poll in flight outlives the queue.
  await deleteQueue(fixture.connection, queueUrl);
  await failedPoll(events);
  await expect(consumer.check()).rejects.toBeInstanceOf(ConsumerDisconnectedError);

  await declareQueue(fixture.connection, spec);
  await sendRaw(fixture.connection, queueUrl, '{"n":2}');
  await waitFor('the message of the queue created again accepted', () =>
    acceptor.accepted.length === 2 ? true : undefined,
  );
  await expect(consumer.check()).resolves.toBeUndefined();
});

it('a poll the network leaves unanswered fails once overdue, whatever the visibility timeout', async () => {
  await throughProxy('silent', async (proxy, connection, queueUrl) => {
    const { consumer, events } = attach(traceRecordingAcceptor(), connection, proxy.urlFor(queueUrl));
    await consumer.ready();
    await proxy.setMode('blackhole');
    await failedPoll(events);
    await expect(consumer.check()).rejects.toThrow(/did not answer/);
  });
});

it('deletes on a socket left silent (a network blip) are abandoned within 30 s, whatever the visibility timeout; the consumer goes on', async () => {
  await throughProxy('blip', async (proxy, connection, queueUrl) => {
    const acceptor = traceRecordingAcceptor();
    // SQS goes silent as the first batch is accepted; its sockets stay silent after (half-open).
    const accept = acceptor.acceptMany.bind(acceptor);
    let blip = false;
    acceptor.acceptMany = async (batch) => {
      if (!blip) {
        blip = true;
        await proxy.setMode('blackhole');
        setTimeout(() => void proxy.setMode('pass', { keepDamaged: true }), 1_000);
      }
      return accept(batch);
    };
    const { consumer, events } = attach(acceptor, connection, proxy.urlFor(queueUrl));
    await consumer.ready();
    await sendRaw(fixture.connection, queueUrl, '{"n":1}');
    await waitFor('the first message accepted', () => (acceptor.accepted.length === 1 ? true : undefined));
    await sendRaw(fixture.connection, queueUrl, '{"n":2}');
    await waitFor(
      'the next message accepted',
      () => (acceptor.accepted.length === 2 ? true : undefined),
      SETTLED_WITHIN_MS,
    );
    expect(events).toContainEqual(expect.objectContaining({ type: 'error' }));
  });
});
