/**
 * Review 98 (review 97's class on Kafka): close() of a publisher or a consumer while its client
 * connects to a peer that accepts TCP and never answers (the silent peer is the only broker)
 * resolves at once, leaves no socket, and a caller waiting is told with a typed error. The
 * connection's timeouts are far beyond the test: a close() that waited for the connect to fail
 * on its own would hang here. Runs on both clients (platformatic/review98-closeWhileConnecting).
 */
import type { InboxAcceptor } from '@ferry/core';
import { attachKafkaConsumer, KafkaPublisher } from '../src';
import { failOnUnhandledRejections, readyOutcome } from '../../../test-support/lifecycle';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { useSilentPeer } from '../../../test-support/silentPeer';
import { outboxMessage, testConnection, uniqueName, waitFor } from './support';
import { recordingLogger } from './quiet';

failOnUnhandledRejections();
jest.setTimeout(60_000);

const peer = useSilentPeer();

/** Far beyond any wait of this test: a connect left to end on its own outlasts the test. */
const CONNECT_TIMEOUT_MS = 600_000;
/** How long close() is given (a deadline for the wait, far below CONNECT_TIMEOUT_MS). */
const CLOSE_WITHIN_MS = 10_000;

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: () => Promise.reject(new Error('nothing is delivered')),
};

function silentConnection(log = recordingLogger()) {
  return testConnection({
    brokers: [`127.0.0.1:${peer.port}`],
    connectionTimeoutMs: CONNECT_TIMEOUT_MS,
    requestTimeoutMs: CONNECT_TIMEOUT_MS,
    kafkaLogLevel: 'debug',
    logger: log.logger,
  });
}

const owners = {
  'publisher, a publish waiting for the connect': () => {
    const publisher = new KafkaPublisher(silentConnection(), { defaultDestination: uniqueName('r98') });
    const publishing = publisher.publish([outboxMessage()], new AbortController().signal);
    return {
      close: () => publisher.close(),
      waiting: publishing.then((outcomes) => outcomes.map(({ status }) => status).join(',')),
    };
  },
  'publisher, its connect()': () => {
    const publisher = new KafkaPublisher(silentConnection(), { defaultDestination: uniqueName('r98') });
    return { close: () => publisher.close(), waiting: readyOutcome(publisher.connect()) };
  },
  consumer: () => {
    const consumer = attachKafkaConsumer(acceptor, {
      connection: silentConnection(),
      topic: uniqueName('r98'),
      groupId: uniqueName('r98-group'),
      consumer: 'review98',
    });
    return { close: () => consumer.close(), waiting: readyOutcome(consumer.ready()) };
  },
};

const expected: Record<keyof typeof owners, string[]> = {
  // Ended by close(), not by the relay: the cluster out of reach, no attempt spent.
  'publisher, a publish waiting for the connect': ['unavailable'],
  'publisher, its connect()': ['FERRY_CLOSED', 'FERRY_TRANSPORT_ERROR'],
  consumer: ['FERRY_CLOSED'],
};

it.each(Object.keys(owners) as (keyof typeof owners)[])(
  '%s: close() while the client connects to a silent peer resolves at once and leaves no socket',
  async (name) => {
    const before = openSocketsTo(peer.port);
    const owner = owners[name]();
    const waiting = outcomeWithin(owner.waiting, CLOSE_WITHIN_MS * 2);
    await waitFor(
      () => peer.sockets.size > 0,
      () => 'no connect reached the peer',
    );
    const closed = await outcomeWithin(Promise.all([owner.close(), owner.close()]), CLOSE_WITHIN_MS);
    expect(closed).toEqual({ value: [undefined, undefined] });
    expect(openSocketsTo(peer.port)).toBe(before);
    await waitFor(
      () => peer.sockets.size === 0,
      () => `the peer still holds ${peer.sockets.size} sockets`,
    );
    // The caller waiting is told at once: a publish's message is not sent and stays to be retried
    // (retryable or unavailable, never permanent: the close is no fault of the message), a
    // connect() or ready() fails typed.
    const outcome = await waiting;
    expect(outcome).toEqual({ value: expect.any(String) });
    expect(expected[name]).toContain((outcome as { value: string }).value);
  },
);
