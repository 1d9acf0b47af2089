import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { OutboxOperatorService } from '@ferry/nestjs';
import { deleteGroups, deleteTopics, ensureTopics, KafkaConnection } from '@ferry/kafka';
import { AppModule } from './app.module';
import { exampleConfig, type ExampleConfig } from './config';
import { freshDatabase } from './database';
import { OrdersService } from './orders.service';
import { PrismaService } from './prisma.service';
import { TopicReader } from './readback';

export interface RelayCounts {
  readonly placed: number;
  readonly orderRows: number;
  readonly eventsSent: number;
  readonly eventsReadBack: number;
  readonly deliveriesReadBack: number;
  readonly customersOutOfOrder: number;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the Nest app (emitter + relay to Kafka), places orders (each in a transaction with its
 * event), and reads the topic back with an independent consumer group until every event arrived.
 */
export async function runOutboxToKafka(
  config: ExampleConfig = exampleConfig(),
  orders = 24,
  customers = 4,
): Promise<RelayCounts> {
  const log = (line: string) => process.stdout.write(`outbox-to-kafka: ${line}\n`);
  await freshDatabase(config.databaseUrl);
  const kafka = new KafkaConnection({ brokers: [...config.kafkaBrokers], clientId: 'outbox-to-kafka-setup' });
  await ensureTopics(kafka, [{ topic: config.topic, partitions: 3 }]);
  const reader = new TopicReader(config.kafkaBrokers, config.topic, config.readerGroup);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  app.enableShutdownHooks(); // SIGTERM / SIGINT: the relay drains, then Kafka and Prisma close
  try {
    await reader.start();
    const ordersService = app.get(OrdersService);
    for (let i = 0; i < orders; i += 1) {
      const id = `order-${String(i).padStart(4, '0')}`;
      await ordersService.place({ id, customerId: `customer-${i % customers}`, amountCents: 1_000 + i });
    }
    log(`placed ${orders} orders; relaying to ${config.topic}`);

    const outbox = app.get(OutboxOperatorService);
    await waitFor('every event read back', async () => {
      return reader.eventIds.size >= orders && (await outbox.stats()).sent >= orders;
    });
    const [rows] = await app.get(PrismaService).$queryRaw<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM outbox_to_kafka_orders`;
    const counts: RelayCounts = {
      placed: orders,
      orderRows: rows?.n ?? 0,
      eventsSent: (await outbox.stats()).sent,
      eventsReadBack: reader.eventIds.size,
      deliveriesReadBack: reader.deliveries,
      customersOutOfOrder: reader.outOfOrder(),
    };
    log(JSON.stringify(counts));
    return counts;
  } finally {
    await reader.stop();
    await app.close(); // relay drains, then the publisher closes, then Prisma disconnects
    await deleteTopics(kafka, [config.topic]);
    await deleteGroups(kafka, [config.readerGroup]);
  }
}

if (require.main === module) {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  runOutboxToKafka().then(
    (counts) => {
      process.exitCode = counts.eventsReadBack === counts.placed && counts.customersOutOfOrder === 0 ? 0 : 1;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
