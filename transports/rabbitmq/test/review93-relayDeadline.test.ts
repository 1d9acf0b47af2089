/**
 * Review 93 (the outbox relay under outages): a broker gone silent must never turn an event
 * FAILED. The RabbitMQ publisher reports what its confirm deadline (`confirmTimeoutMs`, default
 * 10 s) left unconfirmed as `unavailable`, so the relay releases it without spending an attempt.
 * But the relay gives up on a publish itself after one `lease.duration` (publishBatch: a publisher
 * that never answers must not hold it for ever), and charged the batch `retryable` then. With a
 * lease shorter than the publisher's deadline (`lease.duration` 2 s, the default confirmTimeoutMs:
 * both valid, neither checked against the other, and a short lease is what a quick failover asks
 * for), every silent outage spent an attempt on every event it met: with maxRetries 1 one silent
 * second of the broker turned healthy events FAILED ("publisher did not answer within
 * lease.duration").
 */
import { createRelay, emitMany } from '@ferry/core';
import pino from 'pino';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { TcpProxy } from '../../../fault-tests/harness/tcpProxy';
import {
  AMQP_URL,
  openTestBroker,
  uniqueName,
  type TestBroker,
  declareRoutedQueue,
  deleteRoutedQueue,
} from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

jest.setTimeout(60_000);

let broker: TestBroker;
let database: TestDatabase;
const exchange = uniqueName('review93_x');
const queue = uniqueName('review93_q');
const target = new URL(AMQP_URL);
const upstream = { host: target.hostname, port: Number(target.port || 5672) };

beforeAll(async () => {
  broker = await openTestBroker();
  await declareRoutedQueue(broker.channel, exchange, queue);
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
  await deleteRoutedQueue(broker.channel, exchange, queue);
  await broker.close();
});

test('a broker silent for longer than the relay lease spends no attempt (the relay gives up on the publish: unavailable)', async () => {
  const proxy = await TcpProxy.start(upstream);
  const connection = new RabbitConnection({
    url: proxy.urlFor(AMQP_URL),
    connectionName: uniqueName('review93_silent'),
    reconnectBackoff: { initialMs: 50, maxMs: 200 },
  });
  // The default confirmTimeoutMs (10 s): longer than the relay's lease.
  const publisher = new RabbitPublisher(connection, { defaultDestination: exchange });
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: { lease: { duration: 2_000 } },
  });
  try {
    const [warm] = await publisher.publish([outboxMessage({ payload: { warm: true } })], neverAborted());
    expect(warm?.status).toBe('sent');
    const { ids } = await emitMany(database.db, [
      { type: 'doc.stored', payload: { n: 1 }, maxRetries: 1 },
      { type: 'doc.stored', payload: { n: 2 }, orderingKey: 'doc-7', maxRetries: 1 },
    ]);
    await proxy.setMode('blackhole');
    const result = await relay.runOnce();
    const rows = await database.db.query<{ status: string; retry_count: number }>(
      'SELECT status, retry_count FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY seq',
      [ids],
    );
    // Before: both FAILED, retry_count 1 ("publisher did not answer within lease.duration").
    expect(rows).toEqual([
      { status: 'PENDING', retry_count: 0 },
      { status: 'PENDING', retry_count: 0 },
    ]);
    expect({ unavailable: result.unavailable, failed: result.failed, circuit: relay.circuit }).toEqual({
      unavailable: 2,
      failed: 0,
      circuit: 'open',
    });
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
    await proxy.close();
  }
});
