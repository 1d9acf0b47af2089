import {
  combineObservers,
  createEmitter,
  createRelay,
  fromPrisma,
  Inbox,
  type InboxHandlerContext,
  type Relay,
} from '@ferry/core';
import {
  attachKafkaConsumer,
  ensureTopics,
  KafkaConnection,
  KafkaPublisher,
  type KafkaInboxConsumer,
} from '@ferry/kafka';
import type { FerryMetrics } from '@ferry/core/metrics';
import { attachRabbitConsumer, RabbitConnection, type RabbitConsumer } from '@ferry/rabbitmq';
import type { PrismaClient } from '../generated/prisma/client';
import type { DemoConfig } from './config';
import { Resources } from './resources';
import { deadLetterTopic } from './topics';

type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/** The inbox consumer names: orders from RabbitMQ, their events from Kafka downstream. */
export const CONSUMERS = { orders: 'orders', downstream: 'order-events' } as const;

export interface Pipeline {
  readonly inbox: Inbox<Tx>;
  readonly consumer: RabbitConsumer;
  /** The downstream service's consumer of the Kafka topic. */
  readonly downstream: KafkaInboxConsumer;
  readonly relay: Relay;
  readonly counts: { duplicates: number };
  close(): Promise<void>;
}

interface OrderMessage {
  readonly orderId: string;
  readonly customerId: string;
  readonly amountCents: number;
  readonly offeredAt: string;
}

/**
 * The application: an inbox consumer on a RabbitMQ queue whose handler writes the order and
 * emits an `order.accepted` event in the same transaction; the relay publishes those events
 * to a Kafka topic, keyed by customer so each customer's events stay in order. A downstream
 * service's inbox consumer (here in the same inbox) accepts those events from Kafka. Every
 * component reports to `metrics`; with the OpenTelemetry SDK registered (see tracing.ts) each
 * order's path is one trace.
 */
export async function startPipeline(
  config: DemoConfig,
  prisma: PrismaClient,
  names: { queue: string; topic: string; downstreamGroup: string },
  metrics: FerryMetrics,
): Promise<Pipeline> {
  const emitter = createEmitter();
  const counts = { duplicates: 0 };
  // Closed last first: the consumers stop taking deliveries, the inbox lets running handlers
  // finish, then the relay publishes what they emitted. A failed step closes the steps before it.
  const resources = new Resources();
  try {
    // kafkajs logs retried, transient errors (a fresh broker's coordinator loading) at error level;
    // the demo keeps its output to the report, which fails on any count a real error would change.
    const kafka = new KafkaConnection({
      brokers: config.kafkaBrokers,
      clientId: 'ferry-demo',
      kafkaLogLevel: 'nothing',
    });
    await ensureTopics(kafka, [
      { topic: names.topic, partitions: 3 },
      { topic: deadLetterTopic(names.topic) },
    ]);
    const publisher = resources.add(new KafkaPublisher(kafka, { observer: metrics.transport }), (p) =>
      p.close(),
    );
    const relay = resources.add(
      createRelay({
        db: fromPrisma(prisma),
        publisher,
        listenUrl: config.databaseUrl,
        observer: metrics.outbox,
        options: { pollInterval: 200, batchSize: 100 },
      }),
      (r) => r.close(),
    );
    relay.start();

    const inbox = resources.add(
      new Inbox<Tx>(prisma, {
        maxPayloadBytes: 16 * 1024,
        worker: { enabled: true, concurrency: 8, pollIntervalMs: 50 },
        observer: combineObservers(metrics.inbox, (event) => {
          if (event.type === 'duplicate' && event.consumer === CONSUMERS.orders) counts.duplicates += 1;
        }),
        handlers: {
          [CONSUMERS.orders]: async (payload, context: InboxHandlerContext<Tx>) => {
            const order = payload as unknown as OrderMessage;
            await context.tx.order.create({
              data: {
                id: order.orderId,
                customerId: order.customerId,
                amountCents: order.amountCents,
                offeredAt: new Date(order.offeredAt),
              },
            });
            await emitter.emit(context.tx, {
              type: 'order.accepted',
              payload: { ...order },
              destination: names.topic,
              orderingKey: order.customerId,
              tenantId: context.tenantId,
              causationId: context.messageId,
            });
          },
          // The downstream service: it only takes note of each event (its own work would go here).
          [CONSUMERS.downstream]: async () => undefined,
        },
      }),
      (i) => i.close(),
    );
    await inbox.initialize();

    const rabbit = resources.add(
      new RabbitConnection({ url: config.amqpUrl, connectionName: 'ferry-demo' }),
      (r) => r.close(),
    );
    const consumer = resources.add(
      attachRabbitConsumer(inbox, {
        connection: rabbit,
        queue: names.queue,
        consumer: CONSUMERS.orders,
        prefetch: 100,
        observer: metrics.transport,
      }),
      (c) => c.close(),
    );
    await consumer.ready();
    const downstream = resources.add(
      attachKafkaConsumer(inbox, {
        connection: kafka,
        topic: names.topic,
        groupId: names.downstreamGroup,
        consumer: CONSUMERS.downstream,
        maxWaitTimeMs: 200,
      }),
      (d) => d.close(),
    );
    await downstream.ready();
    return { inbox, consumer, downstream, relay, counts, close: () => resources.close() };
  } catch (error) {
    await resources.closeQuietly(); // the start-up's failure is the one to report
    throw error;
  }
}
