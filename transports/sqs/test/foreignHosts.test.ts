/**
 * A destination given as a full queue URL on another host than the connection's endpoint (another
 * region, another account's VPC endpoint, a typo'd host, a LocalStack that is gone). Without an
 * `endpoint` option (AWS's regional endpoint, or one configured outside the code:
 * `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL`) the SDK sends a request for a queue URL to the URL's
 * own host. When that host refuses connections or never answers, the publisher reported its events
 * `unavailable` (an SQS outage): no attempt was ever spent, so they were never FAILED, and each
 * cycle of theirs fed the relay's broker-wide circuit, so the healthy destinations on the
 * connection's endpoint waited behind it. Contract (README, "Queue hosts"): only the endpoint's
 * outage is an outage; a destination on another host failing is the destination's fault
 * (`retryable`: attempts spent, FAILED at maxRetries with a reason naming the host).
 */
import { createRelay, emit, type OutboxEvent } from '@ferry/core';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { closedPort } from '../../../test-support/closedPort';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { TestQueues } from './support/sqs';
import {
  SQS_ENDPOINT,
  neverAborted,
  outboxMessages,
  receiveAtLeast,
  silentEndpoint,
  uniqueName,
  waitFor,
} from './support/sqs';

jest.setTimeout(60_000);

const ENV = 'AWS_ENDPOINT_URL_SQS';
let previousEnv: string | undefined;
let database: TestDatabase;
/** The connection's endpoint is ElasticMQ, configured as operators often do: in the environment. */
let connection: SqsConnection;
let queues: TestQueues;

beforeAll(async () => {
  previousEnv = process.env[ENV];
  process.env[ENV] = SQS_ENDPOINT;
  database = await createTestDatabase();
  connection = new SqsConnection({
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
  });
  queues = new TestQueues(connection);
  // The SDK warns on the console for each request it sends to a queue URL's own host.
  jest.spyOn(console, 'warn').mockImplementation(() => undefined);
});

afterAll(async () => {
  await queues.cleanup();
  await connection.close();
  await database.drop();
  if (previousEnv === undefined) delete process.env[ENV];
  else process.env[ENV] = previousEnv;
});

interface Row {
  id: string;
  status: string;
  retry_count: number;
  last_error: string | null;
}

/**
 * Runs a relay (batchSize 1: a cycle is one event, the oldest first) over a foreign-host event
 * emitted before a healthy one, until the foreign one is FAILED and the healthy one SENT, or the
 * circuit opened (what the foreign host's failures must never do). Returns both rows and the
 * relay's events.
 */
async function relayForeignThenHealthy(
  foreignUrl: string,
  confirmTimeoutMs: number,
): Promise<{ foreign: Row; healthy: Row; seen: OutboxEvent['type'][]; healthyQueueUrl: string }> {
  await database.db.execute('DELETE FROM outbox_events');
  const { queueUrl: healthyQueueUrl } = await queues.declareBare({ name: uniqueName('own-host') });
  const { id: foreignId } = await emit(database.db, {
    type: 'order.placed',
    destination: foreignUrl,
    payload: { n: 1 },
    maxRetries: 2,
  });
  const { id: healthyId } = await emit(database.db, {
    type: 'order.placed',
    destination: healthyQueueUrl,
    payload: { n: 2 },
    maxRetries: 2,
  });
  const seen: OutboxEvent['type'][] = [];
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs });
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    observer: (event) => void seen.push(event.type),
    options: { batchSize: 1, pollInterval: 20, retry: { backoff: 'fixed', initialDelay: 10, maxDelay: 10 } },
  });
  const rows = async (): Promise<{ foreign: Row; healthy: Row }> => {
    const found = await database.db.query<Row>(
      'SELECT id, status, retry_count, last_error FROM outbox_events',
    );
    return {
      foreign: found.find((row) => row.id === foreignId)!,
      healthy: found.find((row) => row.id === healthyId)!,
    };
  };
  relay.start();
  try {
    await waitFor('the foreign event FAILED and the healthy one SENT, or the circuit opened', async () => {
      if (seen.includes('circuit-opened')) return true;
      const { foreign, healthy } = await rows();
      return foreign.status === 'FAILED' && healthy.status === 'SENT' ? true : undefined;
    });
  } finally {
    await relay.close();
    await publisher.close();
  }
  return { ...(await rows()), seen, healthyQueueUrl };
}

// A queue URL typo'd onto a port nothing listens on (a LocalStack that is gone): connections refused.
test('a queue URL on another host that refuses connections is charged and FAILED, and never opens the circuit', async () => {
  const port = await closedPort();
  const foreignUrl = `http://127.0.0.1:${port}/000000000000/orders`;
  const { foreign, healthy, seen, healthyQueueUrl } = await relayForeignThenHealthy(foreignUrl, 2_000);
  // Now: the circuit opens at the first cycle (the foreign event alone, `unavailable`), the
  // foreign event stays PENDING with retry_count 0 for ever, and the healthy one waits.
  expect(foreign).toMatchObject({ status: 'FAILED', retry_count: 2 });
  expect(seen).not.toContain('circuit-opened');
  expect(foreign.last_error).toContain(`127.0.0.1:${port}`);
  expect(foreign.last_error).toContain("not the connection's endpoint");
  expect(healthy).toMatchObject({ status: 'SENT', retry_count: 0 });
  const [received] = await receiveAtLeast(connection, healthyQueueUrl, 1);
  expect(JSON.parse(received!.Body!)).toEqual({ n: 2 });
});

// A queue URL on a host that takes connections and never answers (a VPC endpoint of another
// account whose security group drops the traffic).
test('a queue URL on another host that never answers is charged and FAILED, and never opens the circuit', async () => {
  const silent = await silentEndpoint();
  try {
    const foreignUrl = `${silent.url}/000000000000/orders`;
    const { foreign, healthy, seen } = await relayForeignThenHealthy(foreignUrl, 300);
    expect(foreign).toMatchObject({ status: 'FAILED', retry_count: 2 });
    expect(seen).not.toContain('circuit-opened');
    expect(foreign.last_error).toContain(new URL(silent.url).host);
    expect(foreign.last_error).toContain("not the connection's endpoint");
    expect(healthy).toMatchObject({ status: 'SENT', retry_count: 0 });
  } finally {
    await silent.close();
  }
});

// One publish call: eleven events to a silent host (two batches: the second finds the deadline
// spent by the first) and one to the endpoint's queue.
test("a silent host's events are all charged in a call, and the endpoint's queue in the same call is sent", async () => {
  const silent = await silentEndpoint();
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 300 });
  try {
    const { queueUrl } = await queues.declareBare({ name: uniqueName('own-host-call') });
    const foreign = outboxMessages(11, `${silent.url}/000000000000/orders`);
    const [own] = outboxMessages(1, queueUrl);
    const outcomes = await publisher.publish([...foreign, own!], neverAborted());
    expect(outcomes.map((o) => o.status)).toEqual([...new Array(11).fill('retryable'), 'sent']);
    expect(outcomes[10]).toMatchObject({
      error: expect.stringContaining("passed before its request; the queue's host") as unknown,
    });
    // The endpoint answering is no reason to charge what never reached it: the own endpoint
    // silent is still an outage (review 19).
    const ownSilent = await silentEndpoint();
    const ownConnection = new SqsConnection({
      endpoint: ownSilent.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
      maxAttempts: 1,
    });
    const ownPublisher = new SqsPublisher(ownConnection, { confirmTimeoutMs: 300 });
    try {
      const statuses = (
        await ownPublisher.publish(outboxMessages(11, `${ownSilent.url}/000000000000/orders`), neverAborted())
      ).map((o) => o.status);
      expect(statuses).toEqual(new Array(11).fill('unavailable'));
    } finally {
      await ownPublisher.close();
      await ownConnection.close();
      await ownSilent.close();
    }
  } finally {
    await publisher.close();
    await silent.close();
  }
});

// Review 148: what close() ends is the publisher out of reach, wherever the request went. Observed
// on main: each message of the request to the other host retryable ("…; the queue's host … is not
// the connection's endpoint"), an attempt spent per event in flight at close(), by a relay closed
// after its publisher or left running on it.
test.each(['publisher', 'connection'] as const)(
  "a request to another host in flight when the %s closes is unavailable, not charged as the host's failure",
  async (closed) => {
    const silent = await silentEndpoint();
    const own =
      closed === 'connection'
        ? new SqsConnection({
            region: 'us-east-1',
            credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
            maxAttempts: 1,
          })
        : connection;
    const publisher = new SqsPublisher(own, { confirmTimeoutMs: 30_000 });
    try {
      const [first, ...rest] = outboxMessages(3, `${silent.url}/000000000000/orders`, { orderingKey: 'k' });
      const publishing = publisher.publish([first!, ...rest], neverAborted());
      await waitFor('the request on its way to the other host', () =>
        silent.accepted() > 0 ? true : undefined,
      );
      await (closed === 'publisher' ? publisher.close() : own.close());
      const outcomes = await publishing;
      expect(outcomes.map((o) => o.status)).toEqual(['unavailable', 'unavailable', 'unavailable']);
    } finally {
      await publisher.close();
      if (own !== connection) await own.close();
      await silent.close();
    }
  },
);
