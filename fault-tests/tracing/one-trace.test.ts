/**
 * Scenario tracing/one-trace.
 *
 * Invariant: one message followed across services and transports stays one OpenTelemetry trace
 * and one conversation. An upstream service emits `order.placed` inside its own span; its relay
 * publishes it to RabbitMQ; the downstream inbox accepts it, and its handler emits
 * `shipment.requested` with the handler's tx (no tracing or causation code in the handler); a
 * second relay publishes that to Kafka, where the same inbox accepts and handles it. Every span
 * of the chain (emit, publish, accept, process, on both legs) has the upstream span's trace id
 * and the parent the W3C context says, and each consumer span names the broker that delivered
 * its message (`messaging.system`); the second event carries the first one's correlation id
 * and the first message id as causation. Shared PostgreSQL, RabbitMQ and Kafka; unique names.
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  createRelay,
  emit,
  FERRY_HEADERS,
  fromPrisma,
  Inbox,
  INBOX_TABLE,
  type InboxHandlerContext,
  type Relay,
} from '@ferry/core';
import {
  attachKafkaConsumer,
  deleteGroups,
  deleteTopics,
  ensureTopics,
  KafkaConnection,
  KafkaPublisher,
  type KafkaInboxConsumer,
} from '@ferry/kafka';
import {
  attachRabbitConsumer,
  deleteWorkQueue,
  RabbitConnection,
  RabbitPublisher,
  type RabbitConsumer,
} from '@ferry/rabbitmq';
import amqp from 'amqplib';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createTestDatabase, type TestDatabase } from '../../test-support/database';
import { installTracing, parentSpanId, type TestTracing } from '../../test-support/tracing';
import { waitFor } from '../harness/waitFor';
import { AMQP_CONNECT_TIMEOUT_MS, AMQP_URL } from '../harness/brokers';

jest.setTimeout(180_000);

const KAFKA_BROKERS = (process.env.FERRY_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const logger = pino({ level: 'silent' });
const suffix = randomBytes(5).toString('hex');
const queue = `ferry-trace-${suffix}`;
const topic = `ferry-trace-${suffix}`;
const groupId = `ferry-trace-group-${suffix}`;

let tracing: TestTracing;
let upstream: TestDatabase;
let downstream: TestDatabase;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  tracing = installTracing();
  upstream = await createTestDatabase();
  downstream = await createTestDatabase();
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await tracing.shutdown();
  await upstream.drop();
  await downstream.drop();
});

function relay(db: TestDatabase, publisher: RabbitPublisher | KafkaPublisher): Relay {
  const started = createRelay({
    db: fromPrisma(db.prisma),
    publisher,
    logger,
    options: { pollInterval: 100 },
  });
  started.start();
  closers.push(() => started.close());
  return started;
}

/** The finished span named `name` whose message id is `messageId`. */
function spanOf(name: string, messageId: string): ReadableSpan {
  const found = tracing
    .spans()
    .filter((s) => s.name === name && s.attributes['messaging.message.id'] === messageId);
  if (found.length !== 1) {
    const seen = tracing.spans().map((s) => `${s.name}:${String(s.attributes['messaging.message.id'])}`);
    throw new Error(`expected one "${name}" span of ${messageId}; finished: ${seen.join(', ')}`);
  }
  return found[0]!;
}

it('follows one message RabbitMQ -> inbox -> handler -> outbox -> Kafka -> inbox as one trace', async () => {
  // Downstream: one inbox, fed by RabbitMQ (orders) and Kafka (shipments).
  const seen: InboxHandlerContext[] = [];
  let shipmentId: string | undefined;
  const inbox = new Inbox(downstream.prisma, {
    logger,
    worker: { enabled: true, pollIntervalMs: 50 },
    handlers: {
      orders: async (payload, context) => {
        seen.push(context);
        ({ id: shipmentId } = await emit(context.tx, {
          type: 'shipment.requested',
          payload: { order: payload.order },
          destination: topic,
          tenantId: context.tenantId,
        }));
      },
      shipments: async (_payload, context) => {
        seen.push(context);
      },
    },
  });
  await inbox.initialize();
  closers.push(() => inbox.close());

  const rabbit = new RabbitConnection({ url: AMQP_URL, connectionName: `ferry-trace-${suffix}` });
  closers.push(() => rabbit.close());
  closers.push(async () => {
    const connection = await amqp.connect(AMQP_URL, { timeout: AMQP_CONNECT_TIMEOUT_MS });
    const channel = await connection.createChannel();
    await deleteWorkQueue(channel, { queue });
    await connection.close();
  });
  const rabbitConsumer: RabbitConsumer = attachRabbitConsumer(inbox, {
    connection: rabbit,
    queue,
    consumer: 'orders',
  });
  closers.push(() => rabbitConsumer.close());
  await rabbitConsumer.ready();

  const kafka = new KafkaConnection({
    brokers: KAFKA_BROKERS,
    clientId: 'ferry-trace',
    kafkaLogLevel: 'nothing',
    logger,
  });
  await ensureTopics(kafka, [{ topic, partitions: 1 }, { topic: `${topic}.dlq` }]);
  closers.push(async () => {
    await deleteGroups(kafka, [groupId]);
    await deleteTopics(kafka, [topic, `${topic}.dlq`]);
  });
  const kafkaConsumer: KafkaInboxConsumer = attachKafkaConsumer(inbox, {
    connection: kafka,
    topic,
    groupId,
    consumer: 'shipments',
    sessionTimeoutMs: 6_000,
    heartbeatIntervalMs: 300,
    rebalanceTimeoutMs: 10_000,
    maxWaitTimeMs: 200,
  });
  closers.push(() => kafkaConsumer.close());
  await kafkaConsumer.ready();
  const kafkaPublisher = new KafkaPublisher(kafka);
  closers.push(() => kafkaPublisher.close());
  relay(downstream, kafkaPublisher);

  // Upstream: an application span, inside which the order is emitted; its relay publishes to RabbitMQ.
  const rabbitPublisher = new RabbitPublisher(rabbit);
  closers.push(() => rabbitPublisher.close());
  const checkout = trace.getTracer('checkout-service').startSpan('checkout');
  const { id: orderId } = await context.with(trace.setSpan(context.active(), checkout), () =>
    upstream.prisma.$transaction((tx) =>
      emit(tx, {
        type: 'order.placed',
        payload: { order: 42 },
        destination: `/${queue}`,
        tenantId: 'acme',
        correlationId: 'checkout-42',
      }),
    ),
  );
  checkout.end();
  relay(upstream, rabbitPublisher);

  const stage = async (what: string, done: () => boolean): Promise<void> => {
    try {
      await waitFor(what, done, { timeoutMs: 90_000 });
    } catch (error) {
      const rows = async (db: TestDatabase, table: string): Promise<string> =>
        JSON.stringify(await db.db.query(`SELECT status, last_error FROM ${table}`));
      throw new Error(
        `${(error as Error).message}; upstream outbox ${await rows(upstream, 'outbox_events')}; ` +
          `downstream outbox ${await rows(downstream, 'outbox_events')}; ` +
          `downstream inbox ${await rows(downstream, INBOX_TABLE)}`,
      );
    }
  };
  await stage('the order handled from RabbitMQ', () => seen.some((c) => c.consumer === 'orders'));
  await stage('the shipment handled from Kafka', () => seen.some((c) => c.consumer === 'shipments'));
  const order = seen.find((c) => c.consumer === 'orders')!;
  const shipment = seen.find((c) => c.consumer === 'shipments')!;
  expect(order.messageId).toBe(orderId);
  expect(shipment.messageId).toBe(shipmentId);

  // One conversation: the shipment carries the order's correlation id and the order as its cause.
  expect(shipment.headers[FERRY_HEADERS.correlationId]).toBe('checkout-42');
  expect(shipment.headers[FERRY_HEADERS.causationId]).toBe(orderId);

  // One trace: checkout -> emit -> publish(rabbitmq) -> accept + process(orders) -> emit -> publish(kafka) -> accept + process(shipments).
  await waitFor('the shipment handler span ended', () =>
    tracing.spans().some((s) => s.name === 'process shipments'),
  );
  const emitOrder = spanOf('ferry emit', orderId);
  const publishOrder = spanOf(`publish ${queue}`, orderId);
  const acceptOrder = spanOf('accept orders', orderId);
  const processOrder = spanOf('process orders', orderId);
  const emitShipment = spanOf('ferry emit', shipmentId!);
  const publishShipment = spanOf(`publish ${topic}`, shipmentId!);
  const acceptShipment = spanOf('accept shipments', shipmentId!);
  const processShipment = spanOf('process shipments', shipmentId!);
  const chain = [
    emitOrder,
    publishOrder,
    acceptOrder,
    processOrder,
    emitShipment,
    publishShipment,
    acceptShipment,
    processShipment,
  ];
  expect(new Set(chain.map((s) => s.spanContext().traceId))).toEqual(
    new Set([checkout.spanContext().traceId]),
  );
  const id = (s: ReadableSpan) => s.spanContext().spanId;
  expect(chain.map(parentSpanId)).toEqual([
    checkout.spanContext().spanId,
    id(emitOrder),
    id(publishOrder),
    id(publishOrder),
    id(processOrder),
    id(emitShipment),
    id(publishShipment),
    id(publishShipment),
  ]);
  expect(chain.map((s) => s.kind)).toEqual([
    SpanKind.INTERNAL,
    SpanKind.PRODUCER,
    SpanKind.CONSUMER,
    SpanKind.CONSUMER,
    SpanKind.INTERNAL,
    SpanKind.PRODUCER,
    SpanKind.CONSUMER,
    SpanKind.CONSUMER,
  ]);
  expect(publishOrder.attributes).toMatchObject({
    'messaging.system': 'rabbitmq',
    'messaging.operation.type': 'send',
    'messaging.destination.name': `/${queue}`,
  });
  expect(publishShipment.attributes).toMatchObject({
    'messaging.system': 'kafka',
    'messaging.destination.name': topic,
    'messaging.message.conversation_id': 'checkout-42',
  });
  // The consumer side names the broker that delivered each message, on accept and on process.
  expect(
    [acceptOrder, processOrder, acceptShipment, processShipment].map((s) => s.attributes['messaging.system']),
  ).toEqual(['rabbitmq', 'rabbitmq', 'kafka', 'kafka']);
});
