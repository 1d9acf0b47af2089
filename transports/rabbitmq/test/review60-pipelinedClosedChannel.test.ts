/**
 * Review 60: the relay runs two publish calls at once on the publisher's one channel. A call whose
 * batch holds an exchange not seen yet checks it first (a passive declare on a channel of its own:
 * round trips) while holding the shared channel it was given. When the OTHER call's refused
 * publish (403, internal exchange) closes that channel meanwhile, the first call then publishes
 * on a closed channel: amqplib throws "Channel closed", and the message is reported `retryable`,
 * spending an attempt of a healthy event for another call's refused destination (repeated, it
 * goes FAILED). The README says a refusal in one call charges nothing of the other.
 *
 * What a user sees: healthy events to a newly used exchange get retry_count bumped and
 * last_error "publish failed: Channel closed" whenever a concurrent batch hits a refused exchange.
 * Expected: not charged (sent, or at most `unavailable`). Suspected cause: publisher.ts publishNow
 * holds the channel across holdBackMissing's awaits, and publishOn reports a publish amqplib
 * refused with IllegalOperationError ("Channel closed") through failedOutcome, i.e. `retryable`;
 * that answered failure with no refusal also clears knownExchanges, so the next batches check
 * (and hold the channel) again.
 */
import { createRelay, emitMany, type OutboxEventInput } from '@ferry/core';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import type { Channel } from 'amqplib';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';
import { neverAborted, outboxMessage } from './support/messages';

jest.setTimeout(60_000);

let broker: TestBroker;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  broker = await openTestBroker();
});

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

afterAll(async () => {
  await broker.close();
});

async function healthyExchange(channel: Channel, name: string): Promise<string> {
  const queue = uniqueName('r60_q');
  await channel.assertExchange(name, 'fanout', { durable: false });
  await channel.assertQueue(queue, { durable: false });
  await channel.bindQueue(queue, name, '');
  cleanup.push(
    () => channel.deleteExchange(name),
    () => channel.deleteQueue(queue),
  );
  return queue;
}

test("a call checking a new exchange publishes on the channel another call's refusal closed meanwhile: its healthy messages are charged", async () => {
  const turned = uniqueName('r60_turned');
  await broker.channel.assertExchange(turned, 'fanout', { durable: false });
  cleanup.push(() => broker.channel.deleteExchange(turned));
  const live = uniqueName('r60_live');
  await healthyExchange(broker.channel, live);
  // Exchanges the publisher has not seen yet: the other call checks them first (round trips).
  const fresh = [uniqueName('r60_new_a'), uniqueName('r60_new_b'), uniqueName('r60_new_c')];
  for (const name of fresh) await healthyExchange(broker.channel, name);
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('r60_pipelined') });
  const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 10_000 });
  cleanup.push(
    () => connection.close(),
    () => publisher.close(),
  );
  // Both exchanges seen once, the shared channel open; then one turned internal (refused, 403).
  const warm = await publisher.publish(
    [outboxMessage({ destination: live }), outboxMessage({ destination: turned })],
    neverAborted(),
  );
  expect(warm.map((outcome) => outcome.status)).toEqual(['sent', 'retryable']); // turned: unbound, returned
  await broker.channel.deleteExchange(turned);
  await broker.channel.assertExchange(turned, 'fanout', { durable: false, internal: true });

  const refusedCall = [outboxMessage({ destination: turned })];
  const otherCall = [
    ...fresh.map((destination) => outboxMessage({ destination })),
    outboxMessage({ destination: live }),
  ];
  const [refusedOutcomes, otherOutcomes] = await Promise.all([
    publisher.publish(refusedCall, neverAborted()),
    publisher.publish(otherCall, neverAborted()),
  ]);
  expect(refusedOutcomes[0]).toMatchObject({
    status: 'retryable',
    error: expect.stringMatching(/internal exchange/),
  });
  // Observed on main: its first message 'retryable', "publish failed: Channel closed" (the rest unavailable).
  expect(otherOutcomes.filter((outcome) => outcome.status === 'retryable')).toEqual([]);
});

describe('through the relay (two cycles at once, as its pipeline runs them)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  // What a user sees: a healthy event (its exchange new to the relay) goes FAILED with
  // "publish failed: Channel closed" because a batch in flight at the same time held an event to
  // an internal exchange. Expected: every healthy event SENT, retry_count 0.
  test('a healthy event goes FAILED for a refused event of the other batch in flight', async () => {
    const internal = uniqueName('r60_relay_internal');
    await broker.channel.assertExchange(internal, 'fanout', { durable: false, internal: true });
    cleanup.push(() => broker.channel.deleteExchange(internal));
    // Exchanges new to the relay: each batch checks them first (round trips on the shared channel's
    // connection), so each holds the shared channel a while before it publishes.
    const fresh = Array.from({ length: 19 }, (_, n) => uniqueName(`r60_relay_${n}`));
    for (const name of fresh) await healthyExchange(broker.channel, name);
    const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('r60_relay') });
    const publisher = new RabbitPublisher(connection, { confirmTimeoutMs: 10_000 });
    cleanup.push(
      () => connection.close(),
      () => publisher.close(),
    );
    const refused: OutboxEventInput[] = Array.from({ length: 1 }, () => ({
      type: 'refused',
      destination: internal,
      payload: {},
      maxRetries: 3,
    }));
    const healthy: OutboxEventInput[] = fresh.map((destination) => ({
      type: 'healthy',
      destination,
      payload: {},
      maxRetries: 1,
    }));
    const { ids } = await emitMany(database.db, [...refused, ...healthy]);
    const healthyIds = ids.slice(refused.length);
    const relay = createRelay({
      db: database.db,
      publisher,
      logger: pino({ level: 'silent' }),
      options: { batchSize: 10, retry: { initialDelay: 0 }, circuit: { failureThreshold: 1_000 } },
    });
    try {
      await Promise.all([relay.runOnce(), relay.runOnce()]);
      for (let cycle = 0; cycle < 6; cycle += 1) {
        const settled = await database.db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM outbox_events WHERE id::text = ANY($1) AND status IN ('SENT', 'FAILED')`,
          [healthyIds],
        );
        if (Number(settled[0]!.n) === healthyIds.length) break;
        await relay.runOnce();
      }
      const found = await database.db.query<{
        status: string;
        retry_count: number;
        last_error: string | null;
      }>(`SELECT status, retry_count, last_error FROM outbox_events WHERE id::text = ANY($1) ORDER BY seq`, [
        healthyIds,
      ]);
      // Observed on main: the first healthy event FAILED, retry_count 1, "publish failed: Channel closed".
      expect(found).toEqual(healthyIds.map(() => ({ status: 'SENT', retry_count: 0, last_error: null })));
    } finally {
      await relay.close();
      await database.db.query('DELETE FROM outbox_events');
    }
  });
});
