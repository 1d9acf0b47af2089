/**
 * Problem (noticed by an earlier session): an application whose events carry per-request
 * destinations (a routing key per user on a topic exchange, a queue per user on the default
 * exchange) made a relay span name per routing key (`publish events/user.8812.updated`) and a
 * metric series per queue: span names and registries that grow with the data.
 *
 * Expected, through a real relay and RabbitPublisher with metrics and tracing on: the publish
 * span of a routed event is named after its exchange (`publish <exchange>`), its
 * `messaging.destination.name` keeps the full destination; the destination label is the exchange
 * (the queue on the default exchange), at most 100 of them and `other`; span names alike.
 */
import { SpanKind } from '@opentelemetry/api';
import { createRelay, emitMany } from '@ferry/core';
import { createFerryMetrics } from '@ferry/core/metrics';
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { parsePrometheusText } from '../../../test-support/prometheusText';
import { installTracing, type TestTracing } from '../../../test-support/tracing';
import { AMQP_URL, openTestBroker, uniqueName, type TestBroker } from './support/broker';

jest.setTimeout(120_000);

const PER_KIND = 500;
const BOUND = 100;

let database: TestDatabase;
let broker: TestBroker;
let tracing: TestTracing;

beforeAll(async () => {
  database = await createTestDatabase();
  broker = await openTestBroker();
  tracing = installTracing();
});

afterAll(async () => {
  await tracing.shutdown();
  await broker.close();
  await database.drop();
});

test('1,000 events with per-user routing keys and queues: bounded series and span names', async () => {
  const exchange = uniqueName('labels_ex');
  const queue = uniqueName('labels_q');
  await broker.channel.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
  await broker.channel.assertQueue(queue, { durable: false });
  await broker.channel.bindQueue(queue, exchange, 'user.#');
  const perUser = uniqueName('labels_user');
  const routed = Array.from({ length: PER_KIND }, (_, i) => `${exchange}/user.${i}.updated`);
  // The default exchange, a queue per user (none exists: the broker returns them).
  const direct = Array.from({ length: PER_KIND }, (_, i) => `/${perUser}.${i}`);
  await emitMany(database.db, [
    ...routed.map((destination) => ({ type: 'user.updated', destination, payload: {} })),
    ...direct.map((destination) => ({ type: 'user.updated', destination, payload: {} })),
  ]);

  const metrics = createFerryMetrics();
  const connection = new RabbitConnection({ url: AMQP_URL, connectionName: uniqueName('labels') });
  const publisher = new RabbitPublisher(connection, {
    confirmTimeoutMs: 10_000,
    observer: metrics.transport,
  });
  const relay = createRelay({
    db: database.db,
    publisher,
    logger: pino({ level: 'silent' }),
    options: { batchSize: 2 * PER_KIND },
  });
  try {
    await relay.runOnce();
  } finally {
    await relay.close();
    await publisher.close();
    await connection.close();
    await broker.channel.deleteQueue(queue);
    await broker.channel.deleteExchange(exchange);
  }

  const s = parsePrometheusText(await metrics.registry.metrics());
  expect(s.value('ferry_transport_published_total', { destination: exchange })).toBe(PER_KIND);
  const failedDestinations = new Set(
    s.find('ferry_transport_publish_failures_total').map((sample) => sample.labels.destination),
  );
  expect(failedDestinations.size).toBeLessThanOrEqual(BOUND + 1);
  expect(failedDestinations).toContain('other');
  const everyDestination = new Set(
    s.samples.map((sample) => sample.labels.destination).filter((d) => d !== undefined),
  );
  expect(everyDestination.size).toBeLessThanOrEqual(BOUND + 1);
  expect(s.find('ferry_transport_publish_failures_total').reduce((n, x) => n + x.value, 0)).toBe(PER_KIND);

  const spans = tracing.spans().filter((span) => span.kind === SpanKind.PRODUCER);
  expect(spans).toHaveLength(2 * PER_KIND);
  const names = new Set(spans.map((span) => span.name));
  expect(names.size).toBeLessThanOrEqual(BOUND + 1);
  const routedSpans = spans.filter((span) =>
    routed.includes(span.attributes['messaging.destination.name'] as string),
  );
  expect(routedSpans).toHaveLength(PER_KIND);
  expect(new Set(routedSpans.map((span) => span.name))).toEqual(new Set([`publish ${exchange}`]));
  expect(new Set(spans.map((span) => span.attributes['messaging.destination.name']))).toEqual(
    new Set([...routed, ...direct]),
  );
});
