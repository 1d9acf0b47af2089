/**
 * Review 72 (SQS end to end), failing on main.
 *
 * What I did: what the README's quick start and SqsConnection's doc tell a user to do: one
 * SqsConnection "shared by publishers, consumers and topology helpers". The service consumes 50
 * queues (here, for brevity, 50 consumers of one queue: the same for the connection), each
 * consumer long polling with the default `waitTimeSeconds` of 20, and its outbox relay publishes
 * through an SqsPublisher on the same connection, with `confirmTimeoutMs: 5_000` (ElasticMQ
 * answers a SendMessageBatch in milliseconds).
 *
 * What happened: the connection's SQSClient keeps the SDK's default HTTP agent, 50 sockets
 * (`@smithy/node-http-handler`, maxSockets 50). Each long poll holds one for up to 20 s, so with
 * 50 consumers every other request of the connection (the publisher's SendMessageBatch, but also
 * the consumers' deletes, visibility renewals and dead-letter copies) waits in the agent's queue
 * until a poll ends. The publish to a healthy, idle SQS comes back `unavailable` ("request
 * abandoned ... aborted due to timeout"): the relay releases the events and opens its circuit as
 * for an SQS outage. With 49 consumers the same publish is `sent` at once. Nothing in the README
 * names the limit, and the connection has no option for the agent (only a whole `client`).
 *
 * What should happen: long polls must not starve the connection's other requests: a publish to an
 * SQS that answers is `sent` (e.g. the connection sizes its agent for its long polls, or polls on
 * an agent of their own; at the least the README says how many consumers one connection carries).
 */
import { describe, expect, it } from '@jest/globals';
import type { Agent } from 'node:http';
import { SqsPublisher, attachSqsConsumer, type SqsConnection } from '@ferry/sqs';
import pino from 'pino';
import { countRequests, neverAborted, outboxMessages, uniqueName, waitFor } from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

/** Sockets the connection's HTTP agent has open (in use by requests in flight). */
function openSockets(connection: SqsConnection): number {
  const handler = connection.client.config.requestHandler as { config?: { httpAgent?: Agent } };
  const sockets = handler.config?.httpAgent?.sockets ?? {};
  return Object.values(sockets).reduce((sum, list) => sum + (list?.length ?? 0), 0);
}

describe('review72: long polls and the other requests of one shared SqsConnection', () => {
  const f = useSqsConsumerFixture();

  it('a publish to a healthy SQS is sent, not unavailable, while 50 consumers long poll on the same connection', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('r72-polled') });
    const { queueUrl: outbound } = await f.queues.declare({ name: uniqueName('r72-outbound') });
    const polls = countRequests(f.connection, 'ReceiveMessageCommand');
    const consumers = Array.from({ length: 50 }, () =>
      attachSqsConsumer(acceptor, {
        connection: f.connection,
        consumer: 'orders',
        queueUrl,
        logger: pino({ level: 'silent' }),
      }),
    );
    f.consumers.push(...consumers);
    await Promise.all(consumers.map((consumer) => consumer.ready()));
    await waitFor('50 long polls in flight', () =>
      polls.count() >= 50 && openSockets(f.connection) >= 50 ? true : undefined,
    );
    polls.stop();

    const publisher = new SqsPublisher(f.connection, { confirmTimeoutMs: 5_000 });
    const outcomes = await publisher.publish(outboxMessages(1, outbound), neverAborted());
    expect(outcomes.map((o) => [o.status, 'error' in o ? o.error : null])).toEqual([['sent', null]]);
  });
});
