/**
 * Long polls and the other requests of one shared SqsConnection (review 72): each consumer's long
 * poll holds a socket for up to `waitTimeSeconds`. On the client a connection creates, polls get
 * sockets of their own beside the SDK's 50 for everything else, so any number of consumers can
 * share the connection with publishers; a given client's agent is the user's, and the connection
 * warns once when the polls in flight take all its sockets.
 */
import { describe, expect, it } from '@jest/globals';
import type { Agent } from 'node:http';
import { SQSClient } from '@aws-sdk/client-sqs';
import { FERRY_HEADERS } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsConnection, SqsPublisher, attachSqsConsumer, type SqsConsumer } from '@ferry/sqs';
import pino from 'pino';
import {
  SQS_ENDPOINT,
  countRequests,
  neverAborted,
  outboxMessages,
  sendRaw,
  uniqueName,
  waitFor,
} from './support/sqs';
import { useSqsConsumerFixture } from './support/consumerFixture';

jest.setTimeout(60_000);

const silent = pino({ level: 'silent' });

/** Sockets the connection's HTTP agent has open (in use by requests in flight). */
function openSockets(connection: SqsConnection): number {
  const handler = connection.client.config.requestHandler as { config?: { httpAgent?: Agent } };
  const sockets = handler.config?.httpAgent?.sockets ?? {};
  return Object.values(sockets).reduce((sum, list) => sum + (list?.length ?? 0), 0);
}

describe('long polls on a shared SqsConnection', () => {
  const f = useSqsConsumerFixture();

  it("60 consumers (more than the SDK's 50 sockets) long polling: a publish is sent, and a message they receive is accepted and deleted with no request abandoned", async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('lp-polled') });
    const { queueUrl: outbound } = await f.queues.declare({ name: uniqueName('lp-outbound') });
    const events: TransportConsumerEvent[] = [];
    const polls = countRequests(f.connection, 'ReceiveMessageCommand');
    const consumers = Array.from({ length: 60 }, () =>
      attachSqsConsumer(acceptor, {
        connection: f.connection,
        consumer: 'orders',
        queueUrl,
        // The deadline of a delete or a visibility change: one that waits for a poll runs out.
        visibilityTimeoutSeconds: 5,
        logger: silent,
        observer: (event) => void events.push(event),
      }),
    );
    f.consumers.push(...consumers);
    await Promise.all(consumers.map((consumer) => consumer.ready()));
    await waitFor('60 long polls started, 50 sockets taken', () =>
      polls.count() >= 60 && openSockets(f.connection) >= 50 ? true : undefined,
    );
    polls.stop();

    const publisher = new SqsPublisher(f.connection, { confirmTimeoutMs: 5_000 });
    const outcomes = await publisher.publish(outboxMessages(1, outbound), neverAborted());
    expect(outcomes.map((o) => [o.status, 'error' in o ? o.error : null])).toEqual([['sent', null]]);

    const id = uniqueName('lp-message');
    await sendRaw(f.connection, queueUrl, '{"n":1}', { [FERRY_HEADERS.messageId]: id });
    await waitFor('the message settled', () => (events.some((e) => e.type === 'settled') ? true : undefined));
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    expect(await acceptor.storedIds()).toEqual([id]);
  });

  it('a given client: one warn log once the long polls in flight take every socket of its agent, none before', async () => {
    const acceptor = await f.freshAcceptor();
    const { queueUrl } = await f.queues.declare({ name: uniqueName('lp-given') });
    const warnings: string[] = [];
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) },
    );
    const client = new SQSClient({
      endpoint: SQS_ENDPOINT,
      region: 'us-east-1',
      credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
      requestHandler: { httpAgent: { maxSockets: 3 }, httpsAgent: { maxSockets: 3 } },
    });
    const connection = new SqsConnection({ client, logger });
    const polls = countRequests(connection, 'ReceiveMessageCommand');
    const attach = async (count: number): Promise<void> => {
      const consumers: SqsConsumer[] = [];
      for (let i = 0; i < count; i += 1)
        consumers.push(
          attachSqsConsumer(acceptor, { connection, consumer: 'orders', queueUrl, logger: silent }),
        );
      f.consumers.push(...consumers);
      await Promise.all(consumers.map((consumer) => consumer.ready()));
    };
    try {
      await attach(2);
      await waitFor('2 long polls started', () => (polls.count() >= 2 ? true : undefined));
      expect(warnings).toEqual([]);

      await attach(2);
      await waitFor('4 long polls started', () => (polls.count() >= 4 ? true : undefined));
      expect(warnings).toEqual([
        expect.stringMatching(
          /^ferry\.sqs: 3 long polls in flight on the given SQSClient hold every socket of its HTTP agent \(maxSockets 3\)/,
        ),
      ]);
    } finally {
      await Promise.all(f.consumers.splice(0).map((c) => c.close()));
      await connection.close();
      client.destroy();
    }
  });
});
