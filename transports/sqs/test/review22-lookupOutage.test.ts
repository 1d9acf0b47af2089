/**
 * Review finding (failed first), review 22 of 7491110: the silent-outage fix (3d28627) against the shared queue-name lookup.
 * README (deadlines): a publisher request SQS has not answered is `unavailable` ("a silent outage
 * spends no attempt"); the queue-name lookup a publish waits for is shared and "runs to
 * setupTimeoutMs". When the shared lookup ends first (setupTimeoutMs shorter than
 * confirmTimeoutMs, or a lookup another caller started earlier), failedStatus sees its own
 * deadline not passed and reports the AbortError `retryable`: the silent outage spends an attempt.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createRelay, emit } from '@ferry/core';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

// A user's relay publishes to an SQS queue routed by NAME (routes / destination 'orders'); the
// connection has setupTimeoutMs 500, the publisher confirmTimeoutMs 3000 (both valid options). The
// network to SQS drops packets (connections accepted, nothing answered).
// Contract: a silent SQS is an outage: the event stays PENDING with no attempt spent
// (review19-silentOutage, README "no answer within confirmTimeoutMs ... unavailable").
// Instead: the shared GetQueueUrl ends at setupTimeoutMs, its AbortError is reported `retryable`
// ("queue orders could not be resolved: AbortError ..."), an attempt is spent and with
// maxRetries 1 the healthy event is FAILED.
test('a silent SQS during the shared queue-name lookup spends no attempt, whichever deadline ends the lookup', async () => {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const connection = new SqsConnection({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
    setupTimeoutMs: 500,
  });
  await emit(database.db, { type: 'order.placed', destination: 'orders', payload: { n: 1 }, maxRetries: 1 });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 3_000 });
  const relay = createRelay({ db: database.db, publisher, logger: pino({ level: 'silent' }) });
  try {
    await relay.runOnce();
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  const [row] = await database.db.query<{ status: string; retry_count: number; last_error: string | null }>(
    'SELECT status, retry_count, last_error FROM outbox_events',
  );
  expect(row).toMatchObject({ status: 'PENDING', retry_count: 0 });
});
