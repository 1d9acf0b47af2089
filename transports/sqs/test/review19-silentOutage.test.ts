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
import { createRelay, emit } from '@ferry/core';
import { SqsPublisher } from '@ferry/sqs';
import pino from 'pino';
import { closedPort } from '../../../test-support/closedPort';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { endpointConnection, silentEndpoint } from './support/sqs';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** One relay cycle of one event (maxRetries 1) to `destination` through `endpoint`; the event's row after it. */
async function relayOnceThrough(
  endpoint: string,
  options: { destination?: string; setupTimeoutMs?: number; confirmTimeoutMs: number },
): Promise<{ status: string; retry_count: number; last_error: string | null }> {
  await database.db.execute('DELETE FROM outbox_events');
  const connection = endpointConnection(
    endpoint,
    options.setupTimeoutMs === undefined ? {} : { setupTimeoutMs: options.setupTimeoutMs },
  );
  const destination = options.destination ?? `${endpoint}/000000000000/orders`;
  await emit(database.db, { type: 'order.placed', destination, payload: { n: 1 }, maxRetries: 1 });
  const publisher = new SqsPublisher(connection, { confirmTimeoutMs: options.confirmTimeoutMs });
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
  const refused = await relayOnceThrough(`http://127.0.0.1:${await closedPort()}`, { confirmTimeoutMs: 300 });
  expect(refused).toMatchObject({ status: 'PENDING', retry_count: 0 });
  const silent = await silentEndpoint();
  try {
    expect(await relayOnceThrough(silent.url, { confirmTimeoutMs: 300 })).toMatchObject({
      status: 'PENDING',
      retry_count: 0,
    });
  } finally {
    await silent.close();
  }
});

// Review finding (failed first), review 22 of 7491110: the relay publishes to the queue NAME
// `orders` (resolved by the shared GetQueueUrl) on a connection whose setupTimeoutMs (500) ends
// before the publisher's confirmTimeoutMs (3000). Contract: a silent SQS is an outage, whichever
// deadline ends the lookup. Instead (on 7491110) the lookup's AbortError was `retryable`, an
// attempt was spent and, with maxRetries 1, the healthy event was FAILED.
test('a silent SQS during the shared queue-name lookup spends no attempt, whichever deadline ends the lookup', async () => {
  const silent = await silentEndpoint();
  try {
    const row = await relayOnceThrough(silent.url, {
      destination: 'orders',
      setupTimeoutMs: 500,
      confirmTimeoutMs: 3_000,
    });
    expect(row).toMatchObject({ status: 'PENDING', retry_count: 0 });
  } finally {
    await silent.close();
  }
});
