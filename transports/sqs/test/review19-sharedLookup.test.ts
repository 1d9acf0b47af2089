/**
 * Review finding (failed first), review 19 of 1524e25: the queue-name lookup (GetQueueUrl) is cached as one shared promise per name, made
 * with the deadline of the first caller only (connection.queueUrl(name, signal)). When that
 * caller's deadline ends (its relay aborted the publish, its short confirmTimeoutMs, a consumer's
 * close()), the shared lookup rejects for every other caller waiting for it, whose own deadline
 * is far away: one request ending fails its neighbours (the README promises the opposite for the
 * credential provider call the SDK shares: "one request ending ... fails no other").
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SqsPublisher, attachSqsConsumer, type SqsConnection } from '@ferry/sqs';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveAtLeast,
  uniqueName,
} from './support/sqs';

/** Holds every GetQueueUrl of `connection` for `ms` before it is sent (a slow endpoint). */
function slowQueueUrlLookups(connection: SqsConnection, ms: number): void {
  connection.client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'GetQueueUrlCommand') await new Promise((r) => setTimeout(r, ms));
      return next(args);
    },
    { step: 'initialize', name: `review19-slow-lookup-${Math.random()}` },
  );
}

describe('review19: one caller ending the shared queue-name lookup', () => {
  let setup: SqsConnection;
  let queues: TestQueues;
  const opened: SqsConnection[] = [];

  beforeAll(async () => {
    setup = openConnection();
    queues = new TestQueues(setup);
  });

  afterAll(async () => {
    await Promise.all(opened.map((c) => c.close()));
    await queues.cleanup();
    await setup.close();
  });

  function slowConnection(): SqsConnection {
    const connection = openConnection();
    opened.push(connection);
    slowQueueUrlLookups(connection, 1_000);
    return connection;
  }

  // A user runs two publishers on one connection (e.g. two relays, or one relay's pipelined
  // publishes), routing to the same queue by name. The first publish is aborted by its relay
  // while GetQueueUrl is on its way. Contract: every wait has its own deadline and one caller's
  // failure never harms a neighbour; the second publish (no abort, default confirmTimeoutMs)
  // should be sent. Instead it is reported retryable with the first caller's abort, which
  // spends an attempt of an event nothing was wrong with.
  it("a relay aborting one publish fails another publish's lookup of the same queue name", async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('r19-lookup-abort') });
    const name = queueUrl.split('/').pop()!;
    const connection = slowConnection();
    const first = new SqsPublisher(connection);
    const second = new SqsPublisher(connection);
    const [m1] = outboxMessages(1, name);
    const [m2] = outboxMessages(1, name);
    const abort = new AbortController();
    const firstPublish = first.publish([m1!], abort.signal);
    const secondPublish = second.publish([m2!], neverAborted());
    setTimeout(() => abort.abort(new Error('relay stopped')), 200);
    expect((await firstPublish)[0]!.status).not.toBe('sent');
    expect(await secondPublish).toEqual([{ id: m2!.id, status: 'sent' }]);
    const received = await receiveAtLeast(setup, queueUrl, 1);
    expect(received).toHaveLength(1);
  });

  // Same, through a short confirmTimeoutMs: a publisher configured with 300 ms shares the lookup
  // with one configured with the default; the default one's events fail at 300 ms.
  it("one publisher's short confirmTimeoutMs fails another publisher's lookup of the same queue name", async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('r19-lookup-deadline') });
    const name = queueUrl.split('/').pop()!;
    const connection = slowConnection();
    const hasty = new SqsPublisher(connection, { confirmTimeoutMs: 300 });
    const patient = new SqsPublisher(connection);
    const [m1] = outboxMessages(1, name);
    const [m2] = outboxMessages(1, name);
    const hastyPublish = hasty.publish([m1!], neverAborted());
    const patientPublish = patient.publish([m2!], neverAborted());
    // Its own deadline passed with no answer: unavailable (no attempt spent), see review19-silentOutage.
    expect((await hastyPublish)[0]!.status).toBe('unavailable');
    expect(await patientPublish).toEqual([{ id: m2!.id, status: 'sent' }]);
  });

  // A user closes a consumer attached by queue name (a deploy stops one component) while a
  // publisher on the same connection resolves the same name: the close() aborts the lookup the
  // publisher waits for, and the publisher's event is reported retryable for a close() that is
  // not its own.
  it("a consumer's close() fails a publisher's lookup of the same queue name", async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('r19-lookup-close') });
    const name = queueUrl.split('/').pop()!;
    const connection = slowConnection();
    const consumer = attachSqsConsumer(
      { maxPayloadBytes: 1_000_000, acceptMany: async () => [] },
      { connection, consumer: 'c', queueUrl: name, waitTimeSeconds: 1 },
    );
    await new Promise((r) => setTimeout(r, 50));
    const publisher = new SqsPublisher(connection);
    const [m] = outboxMessages(1, name);
    const publishing = publisher.publish([m!], neverAborted());
    await new Promise((r) => setTimeout(r, 100));
    await consumer.close();
    expect(await publishing).toEqual([{ id: m!.id, status: 'sent' }]);
  });

  // Two consumers of one queue name on one connection (two handlers of one queue); the user
  // closes one while the other is attaching. Contract: a failed attach names the real failure
  // ("SQS did not answer" only when it did not). Instead the surviving consumer reports a failed
  // poll, `SQS did not answer GetQueueUrl ... (endpoint unreachable)`, for the other's close(),
  // and its ready() waits for the reconnect backoff although SQS answered the lookup.
  it("a consumer's close() fails another consumer's attach to the same queue name, named an unreachable endpoint", async () => {
    const { queueUrl } = await queues.declare({ name: uniqueName('r19-lookup-two') });
    const name = queueUrl.split('/').pop()!;
    const connection = slowConnection();
    const acceptor = { maxPayloadBytes: 1_000_000, acceptMany: async () => [] };
    const closing = attachSqsConsumer(acceptor, {
      connection,
      consumer: 'a',
      queueUrl: name,
      waitTimeSeconds: 1,
    });
    const events: TransportConsumerEvent[] = [];
    const staying = attachSqsConsumer(acceptor, {
      connection,
      consumer: 'b',
      queueUrl: name,
      waitTimeSeconds: 1,
      reconnectBackoff: { initialMs: 30_000, maxMs: 30_000, jitter: 'none' },
      observer: (event) => events.push(event),
    });
    try {
      await new Promise((r) => setTimeout(r, 100));
      await closing.close();
      await staying.ready({ timeoutMs: 5_000 }).catch(() => undefined);
      expect(events.filter((e) => e.type === 'disconnected')).toEqual([]);
      expect(events.map((e) => e.type)).toContain('connected');
    } finally {
      await staying.close();
    }
  });
});
