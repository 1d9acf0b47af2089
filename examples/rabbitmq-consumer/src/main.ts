import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InboxAdminService } from '@ferry/nestjs';
import { withAdmin } from './admin';
import { AppModule, Metrics, RabbitInbound } from './app.module';
import { exampleConfig, type ExampleConfig } from './config';
import { freshDatabase } from './database';
import { PrismaService } from './prisma.service';
import { publishOrders, removeQueue, type Traffic } from './upstream';

export interface ConsumerCounts {
  readonly published: number;
  readonly duplicatesAbsorbed: number;
  readonly completedFirstPass: number;
  readonly deadListed: number;
  readonly requeued: number;
  readonly completed: number;
  readonly dead: number;
  readonly orderRows: number;
  readonly distinctOrders: number;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the Nest app (inbox worker + RabbitMQ consumer), lets another service publish orders
 * (some refunds, some twice), then plays the operator: list DEAD, enable refunds, requeue.
 */
export async function runRabbitmqConsumer(
  config: ExampleConfig = exampleConfig(),
  traffic: Traffic = { orders: 12, refunds: 3, duplicates: 4 },
): Promise<ConsumerCounts> {
  await freshDatabase(config.databaseUrl);
  const metrics = new Metrics();
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, metrics), {
    logger: ['error', 'warn'],
  });
  app.enableShutdownHooks(); // SIGTERM / SIGINT: consumer detaches, worker drains, Prisma disconnects
  const log = (line: string) => process.stdout.write(`rabbitmq-consumer: ${line}\n`);
  let failed = false;
  try {
    await app.get(RabbitInbound).ready(); // inside the try: a refused or unreachable broker still closes the app
    const counts = async () => (await app.get(InboxAdminService).forTenant(config.tenant).stats()).counts;
    const published = await publishOrders(config, traffic);
    log(`published ${published} deliveries to ${config.queue}`);
    await waitFor('the first pass', async () => {
      const c = await counts();
      return c.COMPLETED + c.DEAD === traffic.orders && metrics.duplicates === traffic.duplicates;
    });
    const completedFirstPass = (await counts()).COMPLETED;
    log(`first pass: ${completedFirstPass} completed, ${(await counts()).DEAD} DEAD`);

    // The operator, in a context of its own (as `node dist/src/admin.js ...` runs).
    const { deadListed, requeued } = await withAdmin(config, async (admin) => {
      const dead = await admin.listDead();
      for (const record of dead) log(`DEAD ${record.id}: ${record.lastError ?? ''}`);
      await admin.allowRefunds();
      for (const record of dead) await admin.requeue(record.id);
      return { deadListed: dead.length, requeued: dead.length };
    });
    await waitFor('the requeued records', async () => (await counts()).COMPLETED === traffic.orders);

    const final = await counts();
    const prisma = app.get(PrismaService);
    const [rows] = await prisma.$queryRaw<{ total: number; orders: number }[]>`
      SELECT count(*)::int AS total, count(DISTINCT order_id)::int AS orders
      FROM rabbitmq_consumer_orders`;
    const result: ConsumerCounts = {
      published,
      duplicatesAbsorbed: metrics.duplicates,
      completedFirstPass,
      deadListed,
      requeued,
      completed: final.COMPLETED,
      dead: final.DEAD,
      orderRows: rows?.total ?? 0,
      distinctOrders: rows?.orders ?? 0,
    };
    log(`after requeue: ${JSON.stringify(result)}`);
    return result;
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // After a failure, that failure is the one to report: a broker that refused the consumer
    // refuses the queue's removal too, and that error would replace ferry's.
    const closing = close(app, config);
    await (failed ? closing.catch(() => undefined) : closing);
  }
}

/** Closes the app (before Prisma disconnects: PrismaService does that in its own destroy hook), then removes the queue. */
async function close(app: INestApplicationContext, config: ExampleConfig): Promise<void> {
  try {
    await app.close();
  } finally {
    await removeQueue(config);
  }
}

if (require.main === module) {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  runRabbitmqConsumer().then(
    (counts) => {
      process.exitCode = counts.completed === counts.orderRows && counts.dead === 0 ? 0 : 1;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
