/**
 * When close() of a consumer or publisher resolves, nothing ferry or its Kafka client started is
 * still running: no socket, no connect retry timer, no log line through the user's logger
 * afterwards. Checked while the brokers are unreachable (mid-connect, and after failed starts)
 * and against a reachable broker closed mid-connect.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import type { InboxAcceptor } from '@ferry/core';
import {
  attachKafkaConsumer,
  deleteTopics,
  ensureTopics,
  KafkaPublisher,
  type ConnectionOptions,
} from '../src';
import { closedPort } from '../../../test-support/closedPort';
import { kafkaClient } from './clients';
import { outboxMessage, quickRetries, testConnection, uniqueName, waitFor } from './support';
import {
  countConnects,
  settledResources,
  expectBackToBaseline,
  recordingLogger,
  resourcesAbove,
  type RecordingLogger,
  type ResourceCounts,
} from './quiet';

const acceptor: InboxAcceptor = {
  maxPayloadBytes: 1024,
  acceptMany: async (inputs) => inputs.map(() => ({ kind: 'accepted' as const, id: 'x' })),
};

/** A connection that passes every client log line, at every level, to `log`. */
async function connectionTo(
  log: RecordingLogger,
  brokers: 'unreachable' | 'reachable',
  options: Partial<ConnectionOptions> = {},
) {
  return testConnection({
    // Unreachable: the client's connect retries, each start's, 100 ms apart (quickRetries).
    ...(brokers === 'unreachable' ? { brokers: [`127.0.0.1:${await closedPort()}`], ...quickRetries() } : {}),
    connectionTimeoutMs: 200,
    kafkaLogLevel: 'debug',
    logger: log.logger,
    ...options,
  });
}

function attach(log: RecordingLogger, connection: Awaited<ReturnType<typeof connectionTo>>, topic: string) {
  const events: TransportConsumerEvent[] = [];
  const consumer = attachKafkaConsumer(acceptor, {
    connection,
    topic,
    groupId: uniqueName('quiet-group'),
    consumer: 'orders',
    logger: log.logger,
    reconnectBackoff: { initialMs: 20, maxMs: 40, jitter: 'none' },
    observer: (event) => events.push(event),
  });
  return { consumer, events };
}

async function expectQuietAfterClose(
  close: () => Promise<void>,
  baseline: ResourceCounts,
  log: RecordingLogger,
): Promise<void> {
  await close();
  log.markClosed();
  await expectBackToBaseline(baseline);
  // kafkajs ends a socket and unrefs it; the broker closes it later, and kafkajs logs that.
  await waitFor(
    () => connects.openSockets() === 0,
    () => `${connects.openSockets()} sockets of the test still open after close()`,
    2_000,
  );
  expect(log.linesAfterClose()).toEqual([]);
}

/** The TCP connects started during the current test. */
let connects: ReturnType<typeof countConnects>;
beforeEach(() => {
  connects = countConnects();
});
afterEach(() => connects.stop());

/** Waits until a connect to the brokers began: the client is mid-connect. */
const connectStarted = () =>
  waitFor(
    () => connects.count() > 0,
    () => 'no connect started',
  );

/**
 * What expectQuietAfterClose checks, and that close() stopped connecting at once: no connect
 * starts once close() was called (a client retrying its connect starts one per retry).
 */
async function expectConnectingStopped(
  close: () => Promise<void>,
  baseline: ResourceCounts,
  log: RecordingLogger,
): Promise<void> {
  const beforeClose = connects.count();
  await expectQuietAfterClose(close, baseline, log);
  expect(connects.count() - beforeClose).toBe(0);
}

describe('close() leaves nothing running', () => {
  test('a consumer closed mid-connect to unreachable brokers', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'unreachable');
    const baseline = await settledResources();
    const { consumer } = attach(log, connection, 'never-created');
    await connectStarted();
    await expectConnectingStopped(() => consumer.close(), baseline, log);
    await expect(consumer.ready()).rejects.toMatchObject({
      code: 'FERRY_CLOSED',
    });
  });

  test('a consumer closed after failed starts against unreachable brokers', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'unreachable');
    const baseline = await settledResources();
    const { consumer, events } = attach(log, connection, 'never-created');
    await waitFor(
      () => events.filter((event) => event.type === 'disconnected').length >= 2,
      () => `${events.length} events`,
    );
    await expectConnectingStopped(() => consumer.close(), baseline, log);
  });

  // kafkajs: a start is one connect. @platformatic/kafka's clients retry a connect on their own
  // (its idempotent producer at least twice: fewer retries make it retry for ever), about 5
  // connects per start measured; bounded all the same, by ferry's backoff between starts.
  const connectsPerStart = kafkaClient() === 'kafkajs' ? 1 : 8;
  test("a failed start is a bounded number of connects: the consumer's reconnectBackoff retries it, not the client", async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'unreachable');
    const baseline = await settledResources();
    const { consumer, events } = attach(log, connection, 'never-created');
    const failedStarts = () => events.filter((event) => event.type === 'disconnected').length;
    await waitFor(
      () => failedStarts() >= 3,
      () => `${events.length} events`,
    );
    // Each start connects the dead-letter producer; one more start may be under way.
    expect(connects.count()).toBeLessThanOrEqual(connectsPerStart * (failedStarts() + 1));
    await expectConnectingStopped(() => consumer.close(), baseline, log);
  });

  test('a publisher closed mid-connect to unreachable brokers reports the message not sent', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'unreachable');
    const baseline = await settledResources();
    const publisher = new KafkaPublisher(connection, {
      defaultDestination: 'never-created',
    });
    const message = outboxMessage();
    const publishing = publisher.publish([message], new AbortController().signal);
    await connectStarted();
    await expectConnectingStopped(() => publisher.close(), baseline, log);
    const [outcome] = await publishing;
    expect(outcome).toMatchObject({ id: message.id });
    expect(outcome?.status).not.toBe('sent');
  });

  test('a publisher closed while its connect() waits on unreachable brokers', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'unreachable');
    const baseline = await settledResources();
    const publisher = new KafkaPublisher(connection, {
      defaultDestination: 'never-created',
    });
    const connecting = publisher.connect();
    connecting.catch(() => undefined);
    await connectStarted();
    await expectConnectingStopped(() => publisher.close(), baseline, log);
    await expect(connecting).rejects.toThrow();
  });

  test('a consumer closed mid-connect to a reachable broker', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'reachable');
    const baseline = await settledResources();
    const { consumer } = attach(log, connection, uniqueName('quiet-topic'));
    // close() comes once the client has a socket to the broker, while it is joining the group.
    await waitFor(
      () => resourcesAbove(baseline).some((entry) => entry.startsWith('TCPSocketWrap')),
      () => `no socket opened: ${resourcesAbove(baseline).join(', ')}`,
    );
    await expectQuietAfterClose(() => consumer.close(), baseline, log);
  });

  test('a consumer closed once it runs, and a publisher closed after it sent', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'reachable');
    const topic = uniqueName('quiet-running');
    await ensureTopics(connection, [{ topic }, { topic: `${topic}.dlq` }]);
    try {
      const baseline = await settledResources();
      const { consumer } = attach(log, connection, topic);
      const publisher = new KafkaPublisher(connection, { defaultDestination: topic });
      await consumer.ready();
      const [outcome] = await publisher.publish([outboxMessage()], new AbortController().signal);
      expect(outcome?.status).toBe('sent');
      await expectQuietAfterClose(
        () => Promise.all([consumer.close(), publisher.close()]).then(() => undefined),
        baseline,
        log,
      );
    } finally {
      await deleteTopics(testConnection(), [topic, `${topic}.dlq`]);
    }
  });

  // The topology helpers' admin client is closed when they resolve, as a consumer is by close().
  test('ensureTopics and deleteTopics leave nothing running once they resolve', async () => {
    const log = recordingLogger();
    const connection = await connectionTo(log, 'reachable');
    const topic = uniqueName('quiet-topology');
    const baseline = await settledResources();
    await expectQuietAfterClose(
      async () => {
        await ensureTopics(connection, [{ topic }]);
        await deleteTopics(connection, [topic]);
      },
      baseline,
      log,
    );
  });
});
