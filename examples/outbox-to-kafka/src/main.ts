import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
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

async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  signal?: AbortSignal,
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    signal?.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the Nest app (emitter + relay to Kafka), places orders (each in a transaction with its
 * event), and reads the topic back with an independent consumer group until every event arrived.
 * `signal` interrupts it (SIGINT / SIGTERM in `outboxToKafkaMain`): it rejects with the signal's
 * reason at the next order or wait, having closed the app and deleted the run's topic and group.
 */
export async function runOutboxToKafka(
  config: ExampleConfig = exampleConfig(),
  orders = 24,
  customers = 4,
  signal?: AbortSignal,
): Promise<RelayCounts> {
  const log = (line: string) => process.stdout.write(`outbox-to-kafka: ${line}\n`);
  await freshDatabase(config.databaseUrl);
  const kafka = new KafkaConnection({ brokers: [...config.kafkaBrokers], clientId: 'outbox-to-kafka-setup' });
  await ensureTopics(kafka, [{ topic: config.topic, partitions: 3 }]);
  const reader = new TopicReader(config.kafkaBrokers, config.topic, config.readerGroup);
  let app: INestApplicationContext | undefined;
  try {
    app = await NestFactory.createApplicationContext(AppModule.forRoot(config), {
      logger: ['error', 'warn'],
    });
    // No enableShutdownHooks(): Nest's hooks close the app and then re-raise the signal, so the
    // process would die before the topic and group are deleted. `signal` interrupts the run
    // instead, and the finally below closes the app (the relay drains, then Kafka and Prisma close).
    await reader.start();
    const ordersService = app.get(OrdersService);
    for (let i = 0; i < orders; i += 1) {
      signal?.throwIfAborted();
      const id = `order-${String(i).padStart(4, '0')}`;
      await ordersService.place({ id, customerId: `customer-${i % customers}`, amountCents: 1_000 + i });
    }
    log(`placed ${orders} orders; relaying to ${config.topic}`);

    const outbox = app.get(OutboxOperatorService);
    await waitFor(
      'every event read back',
      async () => reader.eventIds.size >= orders && (await outbox.stats()).sent >= orders,
      signal,
    );
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
    await app?.close(); // relay drains, then the publisher closes, then Prisma disconnects
    await deleteTopics(kafka, [config.topic]);
    await deleteGroups(kafka, [config.readerGroup]);
  }
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * The example as a process: exit code 0 when every event was read back in order, 1 otherwise or
 * on an error. SIGINT / SIGTERM interrupt the run, close the app, delete the run's topic and group
 * and exit with 128 + the signal; a second signal exits at once (as the demo's demoMain).
 */
export function outboxToKafkaMain(): void {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  const interrupt = new AbortController();
  let interrupted: keyof typeof SIGNAL_EXIT_CODES | undefined;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
    if (interrupted) process.exit(SIGNAL_EXIT_CODES[signal]);
    interrupted = signal;
    process.stderr.write(
      `outbox-to-kafka: interrupted (${signal}), closing the app and deleting the run's topic; a second signal exits at once\n`,
    );
    interrupt.abort(new Error(`interrupted (${signal})`));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  runOutboxToKafka(undefined, undefined, undefined, interrupt.signal)
    .then(
      (counts) => {
        process.exitCode =
          counts.eventsReadBack === counts.placed && counts.customersOutOfOrder === 0 ? 0 : 1;
      },
      (error: unknown) => {
        if (interrupted) {
          process.exitCode = SIGNAL_EXIT_CODES[interrupted];
          return;
        }
        process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        process.exitCode = 1;
      },
    )
    .finally(() => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, onSignal);
    });
}

if (require.main === module) outboxToKafkaMain();
