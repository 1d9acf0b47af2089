/**
 * Review finding (review 47). SqsPublisher's routing, README "Destination precedence: the event's
 * `destination`, then `routes[type]`, then `defaultDestination`".
 *
 * What I did: a publisher with `routes` and a `defaultDestination`, publishing events with no
 * destination whose type is an ordinary non-empty string emit() accepts but that names a member
 * every JavaScript object inherits: `constructor`, `toString`, `valueOf`; next to them a healthy
 * `order.placed` event with its own route.
 *
 * What happens: queueOf reads `this.options.routes[message.type]` on a plain object (resolved
 * routes are `{ ...options.routes }`), so such a type finds Object.prototype's member (`Object`, a
 * function) and takes it as its queue. observePublish then calls stripUrlCredentials on that
 * function and publish() throws `TypeError: text.replace is not a function`: the relay makes every
 * event of the claimed batch `retryable` ("publish failed: TypeError …"), so one event of such a
 * type charges an attempt to each neighbour in its batch, cycle after cycle, until all of them are
 * FAILED; none is ever sent.
 *
 * What should happen: a type without its own route goes to defaultDestination and is `sent`, and
 * its neighbours are sent (@ferry/rabbitmq's resolveRoute reads routes with hasOwnProperty).
 *
 * Fix direction: read only own routes (Object.hasOwn) or keep resolved routes in a Map / a
 * null-prototype object. @ferry/kafka's wire.ts reads `routing.routes[message.type]` the same way
 * (its resolved routes are a plain `{}` too) and likely has the same defect.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FERRY_HEADERS, createRelay, emit } from '@ferry/core';
import { SqsPublisher, type SqsConnection } from '@ferry/sqs';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import {
  TestQueues,
  neverAborted,
  openConnection,
  outboxMessages,
  receiveAtLeast,
  uniqueName,
} from './support/sqs';

describe('review47: an event type named like an inherited Object member', () => {
  let connection: SqsConnection;
  let queues: TestQueues;
  let database: TestDatabase;

  beforeAll(async () => {
    connection = openConnection();
    queues = new TestQueues(connection);
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await queues.cleanup();
    await connection.close();
    await database.drop();
  });

  it('goes to defaultDestination when it has no route of its own; its neighbour is sent', async () => {
    const orders = uniqueName('r47-orders');
    const fallback = uniqueName('r47-fallback');
    const { queueUrl: ordersUrl } = await queues.declareBare({ name: orders });
    const { queueUrl: fallbackUrl } = await queues.declareBare({ name: fallback });
    const publisher = new SqsPublisher(connection, {
      routes: { 'order.placed': orders },
      defaultDestination: fallback,
    });
    const [healthy] = outboxMessages(1, null);
    const inherited = ['constructor', 'toString', 'valueOf'].map(
      (type) => outboxMessages(1, null, { type })[0]!,
    );
    const messages = [healthy!, ...inherited];
    const outcomes = await Promise.resolve()
      .then(() => publisher.publish(messages, neverAborted()))
      .catch((error: unknown) => [{ thrown: String(error) }]);
    expect(outcomes).toEqual(messages.map((m) => ({ id: m.id, status: 'sent' })));
    expect(await receiveAtLeast(connection, ordersUrl, 1)).toHaveLength(1);
    const received = await receiveAtLeast(connection, fallbackUrl, 3);
    expect(received.map((m) => m.MessageAttributes?.[FERRY_HEADERS.eventType]?.StringValue).sort()).toEqual([
      'constructor',
      'toString',
      'valueOf',
    ]);
  });

  it('relay: one event of type "constructor" does not charge (and fail) the healthy events claimed with it', async () => {
    const orders = uniqueName('r47-relay-orders');
    const fallback = uniqueName('r47-relay-fallback');
    await queues.declareBare({ name: orders });
    await queues.declareBare({ name: fallback });
    const healthy = await emit(database.db, {
      type: 'order.placed',
      destination: orders,
      payload: { n: 1 },
      maxRetries: 1,
    });
    const odd = await emit(database.db, { type: 'constructor', payload: { n: 2 }, maxRetries: 1 });
    const publisher = new SqsPublisher(connection, { defaultDestination: fallback });
    const relay = createRelay({ db: database.db, publisher, logger: pino({ level: 'silent' }) });
    try {
      await relay.runOnce();
    } finally {
      await relay.close();
      await publisher.close();
    }
    const rows = await database.db.query<{ id: string; status: string; last_error: string | null }>(
      'SELECT id, status, last_error FROM outbox_events WHERE id = ANY($1) ORDER BY id',
      [[healthy.id, odd.id]],
    );
    const statusOf = (id: string) => rows.find((r) => r.id === id);
    expect({ healthy: statusOf(healthy.id), odd: statusOf(odd.id) }).toEqual({
      healthy: { id: healthy.id, status: 'SENT', last_error: null },
      odd: { id: odd.id, status: 'SENT', last_error: null },
    });
  });
});
