/**
 * Review 132: close() of a consumer whose LeaveGroup fails (its cluster cut or gone silent as
 * close() comes), and of a publisher whose send the client retries against such a cluster. Once
 * close() resolved (within its bound), nothing the client scheduled is left: no timer or socket
 * of it active, no connect, no heartbeat, no log line, no event. @platformatic/kafka retries a
 * failed request on its own timer (`retries`, `retryDelay`), kafkajs its send. Nor does a
 * disconnect that fails once close() resolved past its bound log a line or start a next step.
 * Runs on both clients (platformatic/review132-closeAfterFailedLeave).
 *
 * Every broker connection of the process goes through a SilentRoute (./silentRoute), which is cut
 * or silenced; the shared broker is never touched.
 */
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { KafkaPublisher, type KafkaConnection } from '../src';
import { kafkaClient } from './clients';
import { ConsumerHarness } from './consumerHarness';
import { outboxMessage, testConnection, waitFor } from './support';
import { activityWithin, SilentRoute } from './silentRoute';
import { expectBackToBaseline, recordingLogger, settledResources, type RecordingLogger } from './quiet';
import { outcomeWithin } from '../../../test-support/deadlines';
import { openSocketsTo } from '../../../test-support/openSockets';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';

failOnUnhandledRejections();
jest.setTimeout(60_000);

const CLOSE_TIMEOUT_MS = 3_000;
/** Several of the clients' retry delays (@platformatic/kafka: 1 s by default). */
const WATCHED_AFTER_CLOSE_MS = 3_000;

let harness: ConsumerHarness;
let route: SilentRoute;
beforeAll(async () => {
  harness = await ConsumerHarness.create();
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  route = await SilentRoute.start();
});
afterEach(async () => {
  await route.close();
});

/**
 * The operations @platformatic/kafka retried on a timer (its `retryDelay`, asked for each retry
 * the client still does once closing, ferry's or the given delay) since the last markClosed().
 */
let retriesAfterClose: string[] = [];
let closed = false;
const retryDelay = (_client: unknown, operation: string): number => {
  if (closed) retriesAfterClose.push(operation);
  return 1_000;
};
beforeEach(() => {
  retriesAfterClose = [];
  closed = false;
});

/** A connection logging every line of the client, at every level, to `log`. */
const loggedConnection = (log: RecordingLogger) =>
  testConnection({
    logger: log.logger,
    kafkaLogLevel: 'debug',
    requestTimeoutMs: 1_000,
    ...(kafkaClient() === 'platformatic' ? { kafkaConfig: { retryDelay } } : {}),
  });

/**
 * `closing` resolves within its bound (a silent cluster may take all of it: the client's
 * connections are then destroyed), the closed `disconnected` last; then for a while nothing
 * connects, no heartbeat starts, nothing is logged and no event follows.
 */
async function expectNothingAfter(
  closing: Promise<void>,
  log: RecordingLogger,
  events: readonly TransportConsumerEvent[],
): Promise<void> {
  expect(await outcomeWithin(closing, CLOSE_TIMEOUT_MS + 10_000)).toEqual({ value: undefined });
  log.markClosed();
  closed = true;
  const count = events.length;
  expect(events[count - 1]).toMatchObject({ type: 'disconnected', reason: 'closed' });
  expect(await activityWithin(WATCHED_AFTER_CLOSE_MS)).toEqual({ connects: [], heartbeats: 0 });
  expect(log.linesAfterClose()).toEqual([]);
  expect(events.slice(count)).toEqual([]);
  expect(retriesAfterClose).toEqual([]);
}

describe.each(['cut', 'silent'] as const)('the cluster %s as close() comes', (fault) => {
  const failCluster = () => (fault === 'cut' ? route.cut() : route.silence());

  test('close() of a joined consumer whose LeaveGroup fails leaves nothing scheduled', async () => {
    const topic = await harness.topicPair(`r132-leave-${fault}`);
    const baseline = await settledResources();
    const log = recordingLogger();
    const { handle, events } = await harness.start(topic, 'review132', {
      connection: loggedConnection(log),
      logger: log.logger,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
    });
    failCluster();
    await expectNothingAfter(handle.close(), log, events);
    expect(openSocketsTo(route.port)).toBe(0);
    // The route's own sockets (a silent one answers no FIN) go with it.
    await route.close();
    await expectBackToBaseline(baseline);
  });

  test('close() of a publisher whose send the client retries leaves nothing scheduled', async () => {
    const topic = await harness.topicPair(`r132-send-${fault}`);
    const baseline = await settledResources();
    const log = recordingLogger();
    const publisher = new KafkaPublisher(loggedConnection(log), {
      defaultDestination: topic,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      logger: log.logger,
    });
    expect(await publisher.publish([outboxMessage()], new AbortController().signal)).toEqual([
      expect.objectContaining({ status: 'sent' }),
    ]);
    failCluster();
    const publishing = publisher.publish([outboxMessage()], new AbortController().signal);
    // The send failed and the client connects again to retry it (cut), or it is on its way (silent).
    await waitFor(
      () => (fault === 'cut' ? route.refused > 0 : route.dropped > 0),
      () => `the send never reached the ${fault} link`,
    );
    const closing = publisher.close();
    expect(await outcomeWithin(closing, CLOSE_TIMEOUT_MS + 10_000)).toEqual({ value: undefined });
    log.markClosed();
    closed = true;
    await outcomeWithin(publishing, 5_000);
    expect(await activityWithin(WATCHED_AFTER_CLOSE_MS)).toEqual({ connects: [], heartbeats: 0 });
    // kafkajs retries a send on timers of its own that nothing cancels: one set before close()
    // may fire after it, its attempt refused by the closed gate (no connect, checked above) and
    // logged at debug level, ending the send. @platformatic/kafka's retries end with close().
    if (kafkaClient() === 'platformatic') expect(log.linesAfterClose()).toEqual([]);
    expect(retriesAfterClose).toEqual([]);
    expect(openSocketsTo(route.port)).toBe(0);
    await route.close();
    await expectBackToBaseline(baseline);
  });
});

/**
 * Each client `connection.driver[kind]()` creates from now on: its disconnect() hangs until the
 * test fails it (fail()), and is counted (calls()).
 */
function hangingDisconnects(connection: KafkaConnection, kind: 'consumer' | 'producer') {
  const pending: ((error: Error) => void)[] = [];
  const driver = connection.driver as unknown as Record<
    typeof kind,
    (options: never) => { disconnect(): Promise<void> }
  >;
  const create = driver[kind].bind(driver);
  jest.spyOn(driver, kind).mockImplementation((options: never) => {
    const client = create(options);
    client.disconnect = () => new Promise<void>((_resolve, reject) => void pending.push(reject));
    return client;
  });
  return {
    calls: () => pending.length,
    fail: (error: Error) => pending.forEach((reject) => reject(error)),
  };
}

// A disconnect that fails once close() gave up on it (its bound passed, the client destroyed):
// on main its failure was logged after close() resolved, and the dead-letter producer was
// disconnected after it. Here the consumer's disconnect hangs until the test fails it.
test('a consumer disconnect that fails after close() resolved past its bound logs nothing and starts nothing', async () => {
  const topic = await harness.topicPair('r132-late-leave');
  const log = recordingLogger();
  const connection = loggedConnection(log);
  const leaves = hangingDisconnects(connection, 'consumer');
  const producerDisconnects = hangingDisconnects(connection, 'producer');
  const { handle, events } = await harness.start(topic, 'review132', {
    connection,
    logger: log.logger,
    closeTimeoutMs: 200,
  });
  expect(await outcomeWithin(handle.close(), 10_000)).toEqual({ value: undefined });
  log.markClosed();
  const count = events.length;
  const disconnectsAtClose = producerDisconnects.calls();
  leaves.fail(new Error('LeaveGroup failed'));
  // The failure's handling is a few promise turns: a macrotask later it has run.
  await new Promise((resolve) => setImmediate(resolve));
  expect(log.linesAfterClose()).toEqual([]);
  expect(producerDisconnects.calls()).toBe(disconnectsAtClose);
  expect(events.slice(count)).toEqual([]);
  // The client destroyed past the bound retries nothing it had waiting (@platformatic/kafka: a
  // fetch retried on its timer connected to the broker after close(), the client's own close
  // refused while its stream ran).
  expect(await activityWithin(WATCHED_AFTER_CLOSE_MS)).toEqual({ connects: [], heartbeats: 0 });
});

test('a publisher disconnect that fails after close() resolved past its bound logs nothing', async () => {
  const topic = await harness.topicPair('r132-late-disconnect');
  const log = recordingLogger();
  const connection = loggedConnection(log);
  const disconnects = hangingDisconnects(connection, 'producer');
  const publisher = new KafkaPublisher(connection, {
    defaultDestination: topic,
    closeTimeoutMs: 200,
    logger: log.logger,
  });
  expect(await publisher.publish([outboxMessage()], new AbortController().signal)).toEqual([
    expect.objectContaining({ status: 'sent' }),
  ]);
  expect(await outcomeWithin(publisher.close(), 10_000)).toEqual({ value: undefined });
  log.markClosed();
  expect(disconnects.calls()).toBeGreaterThan(0);
  disconnects.fail(new Error('disconnect failed'));
  // The failure's handling is a few promise turns: a macrotask later it has run.
  await new Promise((resolve) => setImmediate(resolve));
  expect(log.linesAfterClose()).toEqual([]);
});
