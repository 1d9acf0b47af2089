/**
 * Review 139: the relay runs two publish calls at once (pipelineDepth), on the publisher's one
 * shared channel. A message the broker nacks (a queue full with `x-overflow: reject-publish`) made
 * its call discard that channel at once: closing it failed every confirm the other call still
 * owed on it ("channel closed"), and those healthy events were reported `retryable`, each
 * spending an attempt (FAILED once spent) for another batch's full queue. Only the nacked
 * message may be charged; the other call's messages must be sent (or handed back unspent).
 */
import { createRelay, emitMany, type OutboxEventInput } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import pino from 'pino';
import { createTestDatabase } from '../../../test-support/database';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage, outboxMessages } from './support/messages';

let broker: TestBroker;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  broker = await openTestBroker();
});

afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  await broker.close();
});

async function routedQueue(prefix: string, args: Record<string, unknown> = {}): Promise<string> {
  const name = uniqueName(prefix);
  await broker.channel.assertExchange(name, 'fanout', { durable: true });
  await broker.channel.assertQueue(name, { durable: true, arguments: args });
  await broker.channel.bindQueue(name, name, '');
  cleanup.push(
    () => broker.channel.deleteExchange(name),
    () => broker.channel.deleteQueue(name),
  );
  return name;
}

test('Review finding (failed first): a message nacked by a full queue charges nothing of a concurrent call on the same channel', async () => {
  // Every publish to `full` is nacked: the queue holds none.
  const full = await routedQueue('r139_full', { 'x-max-length': 0, 'x-overflow': 'reject-publish' });
  const live = await routedQueue('r139_live');
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review139') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 10_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  // Both exchanges checked, the shared channel open: the next calls publish at once.
  const warm = await publisher.publish(
    [outboxMessage({ destination: live }), outboxMessage({ destination: full })],
    neverAborted(),
  );
  expect(warm.map((o) => o.status)).toEqual(['sent', 'retryable']);
  await publisher.publish([outboxMessage({ destination: live })], neverAborted());
  for (let round = 0; round < 3; round += 1) {
    const nacked = publisher.publish([outboxMessage({ destination: full })], neverAborted());
    const neighbours = publisher.publish(outboxMessages(300, { destination: live }), neverAborted());
    const [mine, theirs] = await Promise.all([nacked, neighbours]);
    // The reason a FAILED event keeps says what refused it, not only amqplib's "message nacked".
    expect(mine[0]).toMatchObject({ status: 'retryable', error: expect.stringContaining('reject-publish') });
    // Confirmed (sent), or at worst released unspent: never charged for the other call's nack.
    const charged = theirs.filter((o) => o.status !== 'sent' && o.status !== 'unavailable');
    expect({ charged: charged.length, first: charged[0]?.error }).toEqual({ charged: 0, first: undefined });
  }
}, 60_000);

test('Review finding (failed first): a call checking a new exchange while another call discards the shared channel still publishes its batch', async () => {
  const full = await routedQueue('r139_full', { 'x-max-length': 0, 'x-overflow': 'reject-publish' });
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review139') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 10_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  const warm = await publisher.publish([outboxMessage({ destination: full })], neverAborted());
  expect(warm.map((o) => o.status)).toEqual(['retryable']);
  for (let round = 0; round < 3; round += 1) {
    // The shared channel is open and `full` known again (the nack made the publisher forget it).
    await publisher.publish([outboxMessage({ destination: full })], neverAborted());
    // New exchanges, checked one after another: the first call's nack comes back meanwhile.
    const fresh = await Promise.all(Array.from({ length: 20 }, () => routedQueue('r139_new')));
    const nacked = publisher.publish([outboxMessage({ destination: full })], neverAborted());
    const neighbours = publisher.publish(
      fresh.map((destination) => outboxMessage({ destination })),
      neverAborted(),
    );
    const [mine, theirs] = await Promise.all([nacked, neighbours]);
    expect(mine[0]).toMatchObject({ status: 'retryable' });
    // A whole batch released unpublished (unavailable) counts as an outage: the relay's circuit opens.
    expect(theirs.filter((o) => o.status !== 'sent')).toEqual([]);
  }
}, 60_000);

// Through the relay (two batches at once, as its pipeline runs them): the event to the full queue
// runs out of its attempts, FAILED with a reason naming what refuses it; its neighbours, in its
// batch and in the other, are SENT with no attempt spent. (The relay's claims rarely put the two
// batches' publishes close enough together for the nack to meet the other's owed confirms: the
// publisher tests above are the deterministic guard of that.)
test('through the relay (two batches at once): only the event to the full queue goes FAILED', async () => {
  const database = await createTestDatabase();
  cleanup.push(() => database.drop());
  const full = await routedQueue('r139_relay_full', { 'x-max-length': 0, 'x-overflow': 'reject-publish' });
  const live = await routedQueue('r139_relay_live');
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('review139_relay') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 10_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  const nacked: OutboxEventInput = { type: 'nacked', destination: full, payload: {}, maxRetries: 2 };
  const healthy: OutboxEventInput[] = Array.from({ length: 199 }, () => ({
    type: 'healthy',
    destination: live,
    payload: {},
    maxRetries: 1,
  }));
  const { ids } = await emitMany(database.db, [nacked, ...healthy]);
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: { batchSize: 100, retry: { initialDelay: 0 }, circuit: { failureThreshold: 1_000 } },
  });
  try {
    for (let cycle = 0; cycle < 4; cycle += 1) await Promise.all([relay.runOnce(), relay.runOnce()]);
    const found = await database.db.query<{ status: string; retry_count: number; last_error: string | null }>(
      `SELECT status, retry_count, last_error FROM outbox_events ORDER BY seq`,
    );
    expect(found[0]).toMatchObject({
      status: 'FAILED',
      last_error: expect.stringContaining('reject-publish'),
    });
    const harmed = found.slice(1).filter((row) => row.status !== 'SENT' || row.retry_count !== 0);
    expect({ harmed: harmed.length, first: harmed[0] }).toEqual({ harmed: 0, first: undefined });
    expect(ids).toHaveLength(200);
  } finally {
    await relay.close();
  }
}, 60_000);
