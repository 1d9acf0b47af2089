/**
 * Every SQS request of the consumer has a deadline: when SQS stops answering (a TCP blackhole:
 * bytes dropped, no FIN, no RST) at any step of a batch (the deletes, the dead-letter copies,
 * the retry visibility of a failed batch, the redrive visibility of an invalid message, the long
 * poll), the consumer goes on and close() returns; afterwards every message is accepted
 * exactly once and none is lost. Real inbox, real ElasticMQ, the fault harness's TCP proxy.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Inbox, type InboxAcceptor } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { SqsPublisher, attachSqsConsumer, type SqsConnection, type SqsConsumer } from '@ferry/sqs';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  SQS_ENDPOINT,
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  drainOnce,
  proxiedConnection,
  receiveAtLeast,
  receiveNone,
  sendRaw,
  storedIds,
  uniqueName,
  waitFor,
} from './support/sqs';

/** Generous: each step gives up after the visibility timeout (2 s here). */
const CLOSE_DEADLINE_MS = 30_000;

describe('SQS consumer when SQS stops answering', () => {
  let database: TestDatabase;
  let connection: SqsConnection;
  let queues: TestQueues;
  let proxy: TcpProxy;
  let inbox: Inbox;

  beforeAll(async () => {
    database = await createTestDatabase();
    connection = openConnection();
    queues = new TestQueues(connection);
    const endpoint = new URL(SQS_ENDPOINT);
    proxy = await TcpProxy.start({ host: endpoint.hostname, port: Number(endpoint.port) });
    inbox = new Inbox(database.prisma);
    await inbox.initialize();
  });

  afterAll(async () => {
    await proxy.close();
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  const fast = { waitTimeSeconds: 1, visibilityTimeoutSeconds: 2, extendEveryMs: 300 };

  /** Consumers attached through the proxy in the current case; afterEach lets SQS answer and closes them. */
  const attached: { consumer: SqsConsumer; connection: SqsConnection }[] = [];
  afterEach(async () => {
    await proxy.setMode('pass');
    for (const { consumer, connection: proxied } of attached.splice(0)) {
      await consumer.close();
      await proxied.close();
    }
  });

  /** A consumer that reaches `queueUrl` through the proxy, with its events. */
  function attachThroughProxy(
    acceptor: InboxAcceptor,
    queueUrl: string,
    options: Omit<Parameters<typeof attachSqsConsumer>[1], 'connection' | 'queueUrl' | 'observer'>,
  ): { consumer: SqsConsumer; events: TransportConsumerEvent[] } {
    const proxied = proxiedConnection(proxy);
    const events: TransportConsumerEvent[] = [];
    const consumer = attachSqsConsumer(acceptor, {
      ...fast,
      ...options,
      connection: proxied,
      queueUrl: proxy.urlFor(queueUrl),
      observer: (event) => events.push(event),
    });
    attached.push({ consumer, connection: proxied });
    return { consumer, events };
  }

  const rows = (consumer: string) => storedIds(database.db, consumer);

  /** close() must resolve although SQS does not answer; the proxy lets it through afterwards either way. */
  async function expectCloses(consumer: SqsConsumer): Promise<void> {
    let closed = false;
    const closing = consumer.close().then(() => {
      closed = true;
    });
    try {
      await waitFor(
        'close() returned although SQS does not answer',
        () => (closed ? true : undefined),
        CLOSE_DEADLINE_MS,
      );
    } finally {
      await proxy.setMode('pass');
      await closing;
    }
  }

  /** A second consumer, straight to ElasticMQ, until `done` holds; then the queue must be empty. */
  async function drain(
    queueUrl: string,
    consumer: string,
    done: (events: readonly TransportConsumerEvent[]) => boolean | Promise<boolean>,
    extra: Partial<Parameters<typeof attachSqsConsumer>[1]> = {},
  ): Promise<TransportConsumerEvent[]> {
    const events: TransportConsumerEvent[] = [];
    const next = attachSqsConsumer(inbox, {
      connection,
      queueUrl,
      consumer,
      ...fast,
      retryBackoff: { initialMs: 50, maxMs: 100 },
      observer: (event) => events.push(event),
      ...extra,
    });
    try {
      await waitFor(
        'the messages back and settled',
        async () => ((await done(events)) ? true : undefined),
        CLOSE_DEADLINE_MS,
      );
    } finally {
      await next.close();
    }
    expect(await receiveNone(connection, queueUrl)).toEqual([]);
    return events;
  }

  const settled = (events: readonly TransportConsumerEvent[]) =>
    events.reduce((n, e) => n + (e.type === 'settled' ? e.count : 0), 0);

  it('close() returns while the deletes of an accepted batch go unanswered; the batch comes back and is accepted once', async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('dl-delete') });
    const messages = outboxMessages(3, queueUrl);
    await new SqsPublisher(connection).publish(messages, neverAborted());
    // SQS stops answering right after the inbox accepted the batch: the deletes go unanswered.
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: inbox.maxPayloadBytes,
      acceptMany: async (batch) => {
        const results = await inbox.acceptMany(batch);
        await proxy.setMode('blackhole');
        return results;
      },
    };
    const { consumer } = attachThroughProxy(acceptor, queueUrl, {
      consumer: 'deletes',
    });
    await waitFor('SQS gone after the acceptance', () => (proxy.mode === 'blackhole' ? true : undefined));
    await expectCloses(consumer);
    const ids = messages.map((m) => m.id).sort();
    await drain(queueUrl, 'deletes', (seen) => settled(seen) >= messages.length);
    expect(await rows('deletes')).toEqual(ids);
  });

  it('goes on while the dead-letter queue does not answer, and keeps the invalid message until its copy is confirmed', async () => {
    const { queueUrl } = await queues.declareBare({ name: uniqueName('dl-poison') });
    const { queueUrl: deadLetterUrl } = await queues.declareBare({ name: uniqueName('dl-poison-dlq') });
    await sendRaw(connection, queueUrl, '{not json');
    const messages = outboxMessages(2, queueUrl);
    await new SqsPublisher(connection).publish(messages, neverAborted());
    const { consumer, events } = attachThroughProxy(inbox, queueUrl, {
      consumer: 'poison',
      deadLetter: { mode: 'queue', queueUrl: proxy.urlFor(deadLetterUrl) },
      // SQS stops answering as the invalid message is found, before its copy is sent.
      identity: (message) => {
        if (message.Body === '{not json') void proxy.setMode('blackhole');
        return message.MessageId ?? null;
      },
      retryBackoff: { initialMs: 50, maxMs: 100 },
    });
    await waitFor(
      'the valid messages accepted while the dead-letter queue does not answer',
      async () => ((await rows('poison')).length === messages.length ? true : undefined),
      CLOSE_DEADLINE_MS,
    );
    await expectCloses(consumer);
    expect(events.filter((e) => e.type === 'dead-lettered')).toEqual([]);
    // The original stayed in the queue: it comes back and is dead-lettered now that SQS answers.
    await drain(queueUrl, 'poison', (seen) => seen.some((e) => e.type === 'dead-lettered'), {
      deadLetter: { mode: 'queue', queueUrl: deadLetterUrl },
    });
    const copies = await receiveAtLeast(connection, deadLetterUrl, 1);
    expect(new Set(copies.map((m) => m.Body))).toEqual(new Set(['{not json']));
    expect(await rows('poison')).toEqual(messages.map((m) => m.id).sort());
  });

  it('close() returns while the retry visibility of a failed batch goes unanswered; the batch comes back and is accepted once', async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('dl-backoff') });
    const messages = outboxMessages(2, queueUrl);
    await new SqsPublisher(connection).publish(messages, neverAborted());
    // The acceptance fails (not an outage: the batch is given the retry backoff) and SQS is gone.
    const acceptor: InboxAcceptor = {
      maxPayloadBytes: inbox.maxPayloadBytes,
      acceptMany: async () => {
        await proxy.setMode('blackhole');
        throw new Error('the handler table is locked');
      },
    };
    const { consumer } = attachThroughProxy(acceptor, queueUrl, {
      consumer: 'backoff',
      retryBackoff: { initialMs: 60_000, maxMs: 60_000, jitter: 'none' },
    });
    await waitFor('SQS gone after the failed acceptance', () =>
      proxy.mode === 'blackhole' ? true : undefined,
    );
    await expectCloses(consumer);
    // The retry visibility never reached SQS: the batch is back after the visibility timeout.
    await drain(queueUrl, 'backoff', (seen) => settled(seen) >= messages.length);
    expect(await rows('backoff')).toEqual(messages.map((m) => m.id).sort());
  });

  it('close() returns while the redrive visibility of an invalid message goes unanswered; it stays for the redrive policy', async () => {
    const { queueUrl, deadLetterQueueUrl } = await queues.declare({
      name: uniqueName('dl-redrive'),
      deadLetter: { maxReceiveCount: 2 },
    });
    await sendRaw(connection, queueUrl, '{"no":"identity"}');
    const { consumer } = attachThroughProxy(inbox, queueUrl, {
      consumer: 'redrive',
      // The message has no identity; SQS stops answering as it is found invalid.
      identity: () => {
        void proxy.setMode('blackhole');
        return null;
      },
    });
    await waitFor('SQS gone at the invalid message', () => (proxy.mode === 'blackhole' ? true : undefined));
    await expectCloses(consumer);
    // Not deleted: received again until the redrive policy moves it to the dead-letter queue.
    const moved: Message[] = [];
    await drain(queueUrl, 'redrive', async () => {
      moved.push(...(await drainOnce(connection, deadLetterQueueUrl!)));
      return moved.length > 0;
    });
    expect(moved.map((m) => m.Body)).toEqual(['{"no":"identity"}']);
    expect(await rows('redrive')).toEqual([]);
  });

  it('reports a long poll SQS does not answer as disconnected and polls again', async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('dl-poll') });
    const { consumer, events } = attachThroughProxy(inbox, queueUrl, {
      consumer: 'poll',
      reconnectBackoff: { initialMs: 50, maxMs: 100 },
    });
    await consumer.ready();
    await proxy.setMode('blackhole');
    await waitFor(
      'an unanswered poll reported',
      () => (events.some((e) => e.type === 'disconnected') ? true : undefined),
      CLOSE_DEADLINE_MS,
    );
    await proxy.setMode('pass');
    const messages = outboxMessages(2, queueUrl);
    await new SqsPublisher(connection).publish(messages, neverAborted());
    await waitFor(
      'the same consumer accepts again',
      async () => ((await rows('poll')).length === messages.length ? true : undefined),
      CLOSE_DEADLINE_MS,
    );
    expect(events.filter((e) => e.type === 'connected').length).toBeGreaterThanOrEqual(2);
  });
});
