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

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  signal?: AbortSignal,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    signal?.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts the Nest app (inbox worker + RabbitMQ consumer), lets another service publish orders
 * (some refunds, some twice), then plays the operator: list DEAD, enable refunds, requeue.
 * `signal` interrupts it (SIGINT / SIGTERM in `rabbitmqConsumerMain`): it rejects with the
 * signal's reason at the next step or wait, having closed the app and removed the queue.
 */
export async function runRabbitmqConsumer(
  config: ExampleConfig = exampleConfig(),
  traffic: Traffic = { orders: 12, refunds: 3, duplicates: 4 },
  signal?: AbortSignal,
): Promise<ConsumerCounts> {
  await freshDatabase(config.databaseUrl);
  const metrics = new Metrics();
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, metrics), {
    logger: ['error', 'warn'],
  });
  // No enableShutdownHooks(): Nest's hooks close the app and then re-raise the signal, so the
  // process would die before the queue is removed. `signal` interrupts the run instead, and the
  // finally below closes the app (consumer detaches, worker drains, Prisma disconnects) and removes it.
  const log = (line: string) => process.stdout.write(`rabbitmq-consumer: ${line}\n`);
  let failed = false;
  try {
    await app.get(RabbitInbound).ready(); // inside the try: a refused or unreachable broker still closes the app
    signal?.throwIfAborted();
    const counts = async () => (await app.get(InboxAdminService).forTenant(config.tenant).stats()).counts;
    const published = await publishOrders(config, traffic);
    log(`published ${published} deliveries to ${config.queue}`);
    await waitFor(
      'the first pass',
      async () => {
        const c = await counts();
        return c.COMPLETED + c.DEAD === traffic.orders && metrics.duplicates === traffic.duplicates;
      },
      signal,
    );
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
    signal?.throwIfAborted();
    await waitFor('the requeued records', async () => (await counts()).COMPLETED === traffic.orders, signal);

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

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * The example as a process (`node dist/src/main.js`): exit code 0 when every order completed, 1
 * otherwise or on an error. SIGINT / SIGTERM interrupt the run, close the app, remove the queue
 * and exit with 128 + the signal; a second signal exits at once.
 */
export function rabbitmqConsumerMain(): void {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  const interrupt = new AbortController();
  let interrupted: keyof typeof SIGNAL_EXIT_CODES | undefined;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
    if (interrupted) process.exit(SIGNAL_EXIT_CODES[signal]);
    interrupted = signal;
    process.stderr.write(
      `rabbitmq-consumer: interrupted (${signal}), closing the app and removing the queue; a second signal exits at once\n`,
    );
    interrupt.abort(new Error(`interrupted (${signal})`));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  runRabbitmqConsumer(undefined, undefined, interrupt.signal)
    .then(
      (counts) => {
        process.exitCode = counts.completed === counts.orderRows && counts.dead === 0 ? 0 : 1;
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

if (require.main === module) rabbitmqConsumerMain();
