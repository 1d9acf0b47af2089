/**
 * Review 98 (review 97's class on SQS): close() while a request waits on an endpoint that accepts
 * TCP and never answers (a network dropping packets to SQS) resolves at once and leaves no socket
 * to it; a publish in flight is answered at once, not sent and not charged (`unavailable`, as
 * a closed publisher answers), a ready() waiting is told with a typed error. The deadlines are far beyond the
 * test: a close() that let the request run to its deadline would leave its socket open here.
 */
import type { InboxAcceptor } from '@ferry/core';
import { attachSqsConsumer, SqsPublisher, type SqsConnection } from '../src';
import { failOnUnhandledRejections, readyOutcome } from '../../../test-support/lifecycle';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { useSilentPeer } from '../../../test-support/silentPeer';
import { endpointConnection, outboxMessages, waitFor } from './support/sqs';

failOnUnhandledRejections();
jest.setTimeout(60_000);

const peer = useSilentPeer();

/** Far beyond any wait of this test. */
const DEADLINE_MS = 600_000;
/** How long close() and the caller waiting are given (a deadline for the wait). */
const CLOSE_WITHIN_MS = 10_000;

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: () => Promise.reject(new Error('nothing is delivered')),
};

const queueUrl = () => `http://127.0.0.1:${peer.port}/000000000000/review98`;
const silentConnection = () =>
  endpointConnection(`http://127.0.0.1:${peer.port}`, { setupTimeoutMs: DEADLINE_MS });

const owners: Record<
  string,
  (connection: SqsConnection) => { close(): Promise<void>; waiting: Promise<string> }
> = {
  'publisher, a publish in flight': (connection) => {
    const publisher = new SqsPublisher(connection, {
      confirmTimeoutMs: DEADLINE_MS,
      defaultDestination: queueUrl(),
    });
    const publishing = publisher.publish(outboxMessages(1, null), new AbortController().signal);
    return {
      close: () => publisher.close(),
      waiting: publishing.then((outcomes) => outcomes.map(({ status }) => status).join(',')),
    };
  },
  'consumer, its first request': (connection) => {
    const consumer = attachSqsConsumer(acceptor, { connection, queueUrl: queueUrl(), consumer: 'review98' });
    return { close: () => consumer.close(), waiting: readyOutcome(consumer.ready()) };
  },
};

const expected: Record<string, string> = {
  // Ended by close(), not by the relay: SQS out of reach, no attempt spent.
  'publisher, a publish in flight': 'unavailable',
  'consumer, its first request': 'FERRY_CLOSED',
};

it.each(Object.keys(owners))(
  '%s: close() while SQS does not answer resolves at once and leaves no socket',
  async (name) => {
    const connection = silentConnection();
    try {
      const before = openSocketsTo(peer.port);
      const owner = owners[name]!(connection);
      const waiting = outcomeWithin(owner.waiting, CLOSE_WITHIN_MS);
      await waitFor('a request to reach the endpoint', () => (peer.sockets.size > 0 ? true : undefined));
      const closed = await outcomeWithin(Promise.all([owner.close(), owner.close()]), CLOSE_WITHIN_MS);
      expect(closed).toEqual({ value: [undefined, undefined] });
      expect(await waiting).toEqual({ value: expected[name] });
      await waitFor('no socket to the endpoint left open after close()', () =>
        openSocketsTo(peer.port) === before ? true : undefined,
      );
    } finally {
      await connection.close();
    }
  },
);
