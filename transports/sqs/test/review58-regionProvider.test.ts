/**
 * Review 58: an application passes its own SQSClient whose `region` is a provider function (an
 * instance-metadata or config-service lookup) and whose endpoint is given in code. The provider
 * hangs once (a metadata call lost at startup), then answers. Before this change the request's own
 * deadline (confirmTimeoutMs) ended that publish `unavailable` and the next one was sent.
 * Now publish() first awaits connection.foreignHost → routingOf → signingRegion(), which waits on
 * the provider with no deadline, and the pending answer is cached for the connection's life: that
 * publish and every later one never settle. The relay charges each batch at lease.duration
 * ("publisher did not answer"), so every event of the connection ends FAILED while ElasticMQ
 * (the endpoint) is up and the provider answers again.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { createRelay, emit } from '@ferry/core';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { FakeNetwork } from './support/fakeNetwork';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  SQS_ENDPOINT,
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveAtLeast,
  uniqueName,
  waitFor,
} from './support/sqs';

jest.setTimeout(60_000);

let database: TestDatabase;
let admin: SqsConnection;
let queues: TestQueues;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = openConnection();
  queues = new TestQueues(admin);
});

afterAll(async () => {
  await queues.cleanup();
  await admin.close();
  await database.drop();
});

interface Row {
  status: string;
  retry_count: number;
  last_error: string | null;
}

test('a region provider that hangs once does not hold the publisher for ever (the event is SENT, never FAILED)', async () => {
  const { queueUrl } = await queues.declareBare({ name: uniqueName('region-hang') });
  let regionCalls = 0;
  const client = new SQSClient({
    endpoint: SQS_ENDPOINT,
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    // The first lookup is lost; every later one answers.
    region: () => {
      regionCalls += 1;
      return regionCalls === 1 ? new Promise<string>(() => undefined) : Promise.resolve('us-east-1');
    },
  });
  const connection = new SqsConnection({ client });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 300 });
  const { id } = await emit(database.db, {
    type: 'order.placed',
    destination: queueUrl,
    payload: { n: 1 },
    maxRetries: 2,
  });
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: {
      batchSize: 1,
      pollInterval: 20,
      lease: { duration: 1_000, heartbeatInterval: 200 },
      retry: { backoff: 'fixed', initialDelay: 10, maxDelay: 10 },
      circuit: { openMs: 50, maxOpenMs: 200 },
    },
  });
  relay.start();
  let row: Row;
  try {
    row = await waitFor('the event SENT or FAILED', async () => {
      const [found] = await database.db.query<Row>(
        'SELECT status, retry_count, last_error FROM outbox_events WHERE id = $1',
        [id],
      );
      return found && (found.status === 'SENT' || found.status === 'FAILED') ? found : undefined;
    });
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
    client.destroy();
  }
  // Observed: FAILED, retry_count 2, "publisher did not answer within lease.duration (1000 ms)";
  // the provider was asked once only (the pending answer is kept).
  expect(row).toEqual(expect.objectContaining({ status: 'SENT' }));
  const [received] = await receiveAtLeast(admin, queueUrl, 1);
  expect(JSON.parse(received!.Body!)).toEqual({ n: 1 });
});

// The same provider failing once (a throttled metadata call) instead of hanging: routingOf's
// answer (null: "cannot tell") is cached for the connection's life, so with no endpoint configured
// a queue URL of another region refusing connections is `unavailable` for ever again (never
// charged, the relay's circuit opened by one foreign destination: what this change fixed), though
// the provider answers every later call.
test('a region provider that fails once does not turn the foreign-host rule off for the connection', async () => {
  const saved = process.env.AWS_ENDPOINT_URL_SQS;
  delete process.env.AWS_ENDPOINT_URL_SQS;
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  let regionCalls = 0;
  const network = new FakeNetwork();
  const connection = new SqsConnection({
    client: network.client({
      region: (): Promise<string> => {
        regionCalls += 1;
        return regionCalls === 1
          ? Promise.reject(new Error('metadata throttled'))
          : Promise.resolve('us-east-1');
      },
    }),
  });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 5_000 });
  try {
    const destination = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
    await publisher.publish(outboxMessages(1, destination), neverAborted());
    const [later] = await publisher.publish(outboxMessages(1, destination), neverAborted());
    expect(network.hosts).toContain('sqs.eu-west-1.amazonaws.com:443');
    // Observed: unavailable (as before the change), for every later publish too.
    expect(later).toMatchObject({ status: 'retryable' });
  } finally {
    await publisher.close();
    await connection.close();
    connection.options.client?.destroy();
    warn.mockRestore();
    if (saved !== undefined) process.env.AWS_ENDPOINT_URL_SQS = saved;
  }
});
