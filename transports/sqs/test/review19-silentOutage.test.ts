/**
 * Review finding (failed first), review 19 of 1524e25: an SQS endpoint that goes silent (a network dropping packets: connections accepted,
 * nothing answered) is an outage, not a fault of the events. @ferry/core docs/outbox.md
 * ("Broker outages"): a connection-level failure, the broker unreachable, is `unavailable`, so the
 * relay releases the events without spending an attempt and opens its circuit; the RabbitMQ and
 * Kafka publishers report a broker that did not answer within `confirmTimeoutMs` `unavailable`
 * for exactly this reason ("nothing in a message makes the broker withhold its answer"). The SQS
 * publisher reports it `retryable`, so every event claimed during a silent outage spends an
 * attempt per cycle, and an outage longer than maxRetries x backoff turns healthy events FAILED
 * (dead, waiting for an operator), while the same outage as refused connections loses nothing.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createRelay, emit } from '@ferry/core';
import { SqsConnection, SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { closedPort } from '../../../test-support/closedPort';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

async function relayOnceThrough(
  endpoint: string,
): Promise<{ status: string; retry_count: number; last_error: string | null }> {
  await database.db.execute('DELETE FROM outbox_events');
  const connection = new SqsConnection({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
    maxAttempts: 1,
  });
  const queueUrl = `${endpoint}/000000000000/orders`;
  await emit(database.db, { type: 'order.placed', destination: queueUrl, payload: { n: 1 }, maxRetries: 1 });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: 300 });
  const relay = createRelay({ db: database.db, publisher, logger: pino({ level: 'silent' }) });
  try {
    await relay.runOnce();
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
  }
  const [row] = await database.db.query<{ status: string; retry_count: number; last_error: string | null }>(
    'SELECT status, retry_count, last_error FROM outbox_events',
  );
  return row!;
}

// A user's relay publishes to SQS while the network to SQS drops packets (a silent endpoint).
// Contract: the outage spends no attempt; the event stays PENDING (released) and is sent once SQS
// answers again. Instead the event is charged an attempt and, at maxRetries, FAILED.
test('a silent SQS endpoint spends no attempt of a healthy event: it stays PENDING, as with a refusing one', async () => {
  const refused = await relayOnceThrough(`http://127.0.0.1:${await closedPort()}`);
  expect(refused).toMatchObject({ status: 'PENDING', retry_count: 0 });

  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const silent = await relayOnceThrough(`http://127.0.0.1:${port}`);
    expect(silent).toMatchObject({ status: 'PENDING', retry_count: 0 });
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
