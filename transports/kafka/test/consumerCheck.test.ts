/**
 * consumer.check(), the readiness probe of a Kafka inbox consumer (review 71): down until the
 * member first joined its group, up while its session runs, down while it has lost the cluster
 * (every connection through the link cut, new ones dropped), up again once it re-joined,
 * FERRY_CLOSED once closed. ready() stays the start-up gate. Runs on both clients
 * (platformatic/consumerCheck.test.ts).
 */
import { ConsumerDisconnectedError } from '@ferry/core';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import {
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  type KafkaInboxConsumer,
  UndecodableBatchError,
} from '../src';
import { closedPort } from '../../../test-support/closedPort';
import { traceRecordingAcceptor } from '../../../test-support/tracing';
import { kafkaClient } from './clients';
import { ShapedLink } from './shapedLink';
import { fastGroup, quickRetries, testConnection, uniqueName, waitFor } from './support';

jest.setTimeout(120_000);

/** What check() answers now: 'up', or the rejection. */
const probe = (consumer: KafkaInboxConsumer): Promise<unknown> =>
  consumer.check().then(
    () => 'up',
    (error: unknown) => error,
  );

const admin = testConnection();
const topic = uniqueName('check');
const groupId = uniqueName('check-group');

beforeAll(async () => {
  await ensureTopics(admin, [{ topic, partitions: 1 }, { topic: `${topic}.dlq` }]);
});

afterAll(async () => {
  await deleteGroups(admin, [groupId]).catch(() => undefined);
  await deleteTopics(admin, [topic, `${topic}.dlq`]);
});

test('is down until the member first joined, naming the consumer and the last failed start; FERRY_CLOSED once closed', async () => {
  const events: TransportConsumerEvent[] = [];
  const connection = testConnection({
    brokers: [`127.0.0.1:${await closedPort()}`],
    connectionTimeoutMs: 200,
    ...quickRetries(),
  });
  const consumer = attachKafkaConsumer(traceRecordingAcceptor(), {
    connection,
    topic: 'never-created',
    groupId: 'never-joined',
    consumer: 'billing',
    deadLetter: { sendRetries: 1 },
    reconnectBackoff: { initialMs: 20, maxMs: 40, jitter: 'none' },
    observer: (event) => void events.push(event),
  });
  const what = 'Kafka inbox consumer billing of group never-joined (topics never-created)';
  try {
    await waitFor(
      () => events.some((event) => event.type === 'disconnected'),
      () => `${events.length} events`,
    );
    const error = await probe(consumer);
    expect(error).toBeInstanceOf(ConsumerDisconnectedError);
    expect(error).toMatchObject({ code: 'FERRY_TRANSPORT_ERROR', consumer: what });
    expect((error as Error).message).toMatch(
      new RegExp(
        `^${escape(what)} is not connected: it has not attached yet; the last attempt failed: FERRY_TRANSPORT_ERROR`,
      ),
    );
  } finally {
    await consumer.close();
  }
  await expect(consumer.check()).rejects.toMatchObject({
    code: 'FERRY_CLOSED',
    message: `${what} is closed`,
  });
});

test('is up while the session runs, down while the cluster is lost, up again once re-joined', async () => {
  const link = await ShapedLink.start({});
  const connection = link.connection('ferry-check', { client: kafkaClient(), requestTimeoutMs: 2_000 });
  const events: TransportConsumerEvent[] = [];
  const consumer = attachKafkaConsumer(traceRecordingAcceptor(), {
    connection,
    topic,
    groupId,
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
    reconnectBackoff: { initialMs: 100, maxMs: 500 },
    observer: (event) => void events.push(event),
  });
  try {
    await consumer.ready({ timeoutMs: 60_000 });
    expect(await probe(consumer)).toBe('up');

    link.setDown(true);
    await waitFor(
      () => events.some((event) => event.type === 'disconnected'),
      () => JSON.stringify(events.map((event) => event.type)),
      60_000,
    );
    const error = await probe(consumer);
    expect(error).toBeInstanceOf(ConsumerDisconnectedError);
    // The session ends on the cut connection, or (on a loaded machine) a heartbeat answered late
    // ends it a moment before: either way the reconnects that follow fail on the connection.
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Kafka inbox consumer billing of group ${groupId} \\(topics ${topic}\\) is not connected: it lost its (connection|group session) and has not re-attached`,
      ),
    );
    await expect(consumer.ready({ timeoutMs: 1 })).resolves.toBeUndefined();

    link.setDown(false);
    await waitFor(
      async () => (await probe(consumer)) === 'up',
      () => JSON.stringify(events.map((event) => event.type)),
      60_000,
    );
  } finally {
    await consumer.close();
    await link.close();
  }
  await expect(consumer.check()).rejects.toMatchObject({ code: 'FERRY_CLOSED' });
});

// Review 132: a session that ended for another reason than a connection (here a batch the client
// cannot decompress) was reported as "it lost its connection": an operator checked the network.
test('names the group session, not the connection, when the session ended for another reason', async () => {
  const connection = testConnection();
  const createConsumer = connection.driver.consumer.bind(connection.driver);
  let crash: ((error: unknown) => void) | null = null;
  jest.spyOn(connection.driver, 'consumer').mockImplementation((options) => {
    const consumer = createConsumer(options);
    const run = consumer.run.bind(consumer);
    consumer.run = (handlers) => {
      crash = (error) => handlers.onCrash(error, null);
      return run(handlers);
    };
    return consumer;
  });
  const events: TransportConsumerEvent[] = [];
  const consumer = attachKafkaConsumer(traceRecordingAcceptor(), {
    connection,
    topic,
    groupId: uniqueName('check-session'),
    consumer: 'billing',
    ...fastGroup,
    maxWaitTimeMs: 200,
    // The next session waits long enough for the probe below.
    reconnectBackoff: { initialMs: 30_000, maxMs: 30_000 },
    observer: (event) => void events.push(event),
  });
  try {
    await consumer.ready({ timeoutMs: 60_000 });
    crash!(new UndecodableBatchError('codec 7'));
    await waitFor(
      () => events.some((event) => event.type === 'disconnected'),
      () => JSON.stringify(events.map((event) => event.type)),
    );
    const error = await probe(consumer);
    expect(error).toBeInstanceOf(ConsumerDisconnectedError);
    expect((error as Error).message).toMatch(
      / is not connected: it lost its group session and has not re-attached; the last failure: .*codec 7/,
    );
  } finally {
    await consumer.close();
  }
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
