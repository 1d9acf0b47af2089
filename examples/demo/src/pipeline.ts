import {
  combineObservers,
  createEmitter,
  createRelay,
  fromPrisma,
  Inbox,
  type InboxHandlerContext,
  type Relay,
} from '@ferry/core';
import { KafkaConnection, KafkaPublisher, ensureTopics } from '@ferry/kafka';
import type { FerryMetrics } from '@ferry/core/metrics';
import { attachRabbitConsumer, RabbitConnection, type RabbitConsumer } from '@ferry/rabbitmq';
import type { PrismaClient } from '../generated/prisma/client';
import type { DemoConfig } from './config';

type Tx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

export interface Pipeline {
  readonly inbox: Inbox<Tx>;
  readonly consumer: RabbitConsumer;
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
 * to a Kafka topic, keyed by customer so each customer's events stay in order. Every component
 * reports to `metrics`.
 */
export async function startPipeline(
  config: DemoConfig,
  prisma: PrismaClient,
  names: { queue: string; topic: string },
  metrics: FerryMetrics,
): Promise<Pipeline> {
  const emitter = createEmitter();
  const counts = { duplicates: 0 };
  const inbox = new Inbox<Tx>(prisma, {
    maxPayloadBytes: 16 * 1024,
    worker: { enabled: true, concurrency: 8, pollIntervalMs: 50 },
    observer: combineObservers(metrics.inbox, (event) => {
      if (event.type === 'duplicate') counts.duplicates += 1;
    }),
    handlers: {
      orders: async (payload, context: InboxHandlerContext<Tx>) => {
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
    },
  });
  await inbox.initialize();

  // kafkajs logs retried, transient errors (a fresh broker's coordinator loading) at error level;
  // the demo keeps its output to the report, which fails on any count a real error would change.
  const kafka = new KafkaConnection({
    brokers: config.kafkaBrokers,
    clientId: 'ferry-demo',
    kafkaLogLevel: 'nothing',
  });
  await ensureTopics(kafka, [{ topic: names.topic, partitions: 3 }]);
  const publisher = new KafkaPublisher(kafka, { observer: metrics.transport });
  const relay = createRelay({
    db: fromPrisma(prisma),
    publisher,
    listenUrl: config.databaseUrl,
    observer: metrics.outbox,
    options: { pollInterval: 200, batchSize: 100 },
  });
  relay.start();

  const rabbit = new RabbitConnection({ url: config.amqpUrl, connectionName: 'ferry-demo' });
  const consumer = attachRabbitConsumer(inbox, {
    connection: rabbit,
    queue: names.queue,
    consumer: 'orders',
    prefetch: 100,
    observer: metrics.transport,
  });
  await consumer.ready();

  return {
    inbox,
    consumer,
    relay,
    counts,
    async close() {
      await consumer.close();
      await rabbit.close();
      await inbox.close();
      await relay.close();
      await publisher.close();
    },
  };
}
