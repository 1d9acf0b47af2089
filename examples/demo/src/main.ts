import type { PrismaClient } from '../generated/prisma/client';
import { FerryConfigError } from '@ferry/core';
import { QueueProbe } from './broker';
import { demoConfig, type DemoConfig } from './config';
import { freshDatabase } from './database';
import { startMetrics } from './metrics';
import { CONSUMERS, startPipeline } from './pipeline';
import { Progress } from './progress';
import { Resources } from './resources';
import { TopicReader } from './readback';
import { deadLetterTopic, removeRunTopics } from './topics';
import { disagreements, formatReport, formatTraces, type DemoCounts } from './report';
import { orderTraces, type OrderTrace } from './traces';
import { startTracing } from './tracing';
import { offerTraffic, type OfferedTraffic } from './traffic';

async function waitFor(
  check: () => Promise<boolean> | boolean,
  deadline: number,
  signal?: AbortSignal,
): Promise<boolean> {
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

async function count(prisma: PrismaClient, sql: string): Promise<number> {
  const [row] = await prisma.$queryRawUnsafe<{ n: number }[]>(sql);
  return row?.n ?? 0;
}

export interface DemoResult {
  readonly counts: DemoCounts;
  readonly offered: OfferedTraffic;
  readonly disagreements: readonly string[];
  /** The demo's /metrics endpoint and what it answered at the end of the run. */
  readonly metrics: { readonly url: string; readonly scraped: string };
  /** Each order's trace id, and the steps of its path missing from that trace (none when correct). */
  readonly traces: readonly OrderTrace[];
}

/**
 * Runs the demo once. `signal` interrupts it (SIGINT / SIGTERM in `demoMain`): it rejects with
 * the signal's reason at the next step or wait, having closed what it started.
 */
export async function runDemo(config: DemoConfig = demoConfig(), signal?: AbortSignal): Promise<DemoResult> {
  const started = Date.now();
  const names = {
    queue: `ferry.demo.orders.${config.runId}`,
    topic: `ferry.demo.order-events.${config.runId}`,
    downstreamGroup: `ferry-demo-downstream-${config.runId}`,
    readbackGroup: `ferry-demo-readback-${config.runId}`,
  };
  process.stdout.write(
    `ferry demo: RabbitMQ queue ${names.queue} -> inbox -> orders + outbox -> Kafka topic ${names.topic} -> inbox\n`,
  );
  // Whatever started is closed, also when a later step fails (a broker down): last first.
  const resources = new Resources();
  try {
    const tracing = resources.add(startTracing(), (t) => t.shutdown());
    const prisma = resources.add(await freshDatabase(config.databaseUrl), (p) => p.$disconnect());
    signal?.throwIfAborted();
    // Opened early, closed late: removes the queue's topology once the pipeline stopped using it.
    const probe = resources.add(await QueueProbe.open(config.amqpUrl, names.queue), (p) =>
      p.removeTopology(),
    );
    // Registered before what uses them: deleted once the pipeline and the reader stopped.
    resources.add(names, (n) =>
      removeRunTopics(
        config.kafkaBrokers,
        [n.topic, deadLetterTopic(n.topic)],
        [n.downstreamGroup, n.readbackGroup],
      ),
    );
    const metrics = resources.add(await startMetrics(prisma, config.metricsPort), (m) => m.close());
    process.stdout.write(`ferry demo: metrics on ${metrics.url} while it runs\n`);
    const pipeline = resources.add(await startPipeline(config, prisma, names, metrics.metrics), (p) =>
      p.close(),
    );
    const reader = resources.add(
      new TopicReader(config.kafkaBrokers, names.topic, names.readbackGroup),
      (r) => r.stop(),
    );
    await reader.start();
    signal?.throwIfAborted();
    const offered = await offerTraffic(config, names.queue, tracing.tracer);
    const traceNames = { orders: CONSUMERS.orders, downstream: CONSUMERS.downstream, topic: names.topic };
    const traces = () => orderTraces(tracing.spans(), offered.orders, traceNames);
    const progress = new Progress('events read back from Kafka', offered.valid);
    const deadline = started + config.deadlineMs;
    await waitFor(
      () => {
        progress.update(reader.firstSeen.size);
        return reader.firstSeen.size >= offered.valid;
      },
      deadline,
      signal,
    );
    progress.finish();
    await waitFor(
      async () => (await probe.deadLettered()) >= offered.invalid,
      Math.min(deadline, Date.now() + 10_000),
      signal,
    );
    // The last events read back may still be marked SENT, and the last completions counted.
    await waitFor(
      async () =>
        (await count(prisma, `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`)) >=
          offered.valid &&
        (await metrics.counts()).completed >= offered.valid &&
        (await metrics.counts()).sent >= offered.valid,
      Math.min(deadline, Date.now() + 10_000),
      signal,
    );
    // The downstream consumer's last acceptances and handlers may still be running: on a loaded
    // machine they lag the read-back by more than 10 s (a CI run found 9 of 120 handlers not yet
    // run 10 s after every event was read back, p50 latency 14 s), so up to the run's deadline.
    await waitFor(() => traces().every((t) => t.missing.length === 0), deadline, signal);
    const traced = traces();
    const deadLettered = await probe.deadLettered();
    const counts: DemoCounts = {
      offered: offered.offered,
      accepted: await count(
        prisma,
        `SELECT count(*)::int AS n FROM ferry_inbox_receipts WHERE consumer = '${CONSUMERS.orders}'`,
      ),
      duplicatesAbsorbed: pipeline.counts.duplicates,
      deadLettered,
      deadLetterReasons: await probe.deadLetterReasons(),
      ordersWritten: await count(prisma, 'SELECT count(*)::int AS n FROM demo_orders'),
      eventsOnKafka: reader.firstSeen.size,
      kafkaDeliveries: reader.deliveries,
      latenciesMs: reader.latenciesMs,
      metrics: await metrics.counts(),
      tracesComplete: traced.filter((t) => t.missing.length === 0).length,
      distinctTraces: new Set(traced.map((t) => t.traceId)).size,
    };
    const scraped = await metrics.scrape();
    process.stdout.write(`${formatTraces(traced)}\n`);
    process.stdout.write(`${formatReport(counts, offered, Date.now() - started, metrics.url)}\n`);
    const wrong = disagreements(counts, offered);
    for (const line of wrong) process.stdout.write(`MISMATCH ${line}\n`);
    if (wrong.length > 0) {
      process.stdout.write(`reader partitions: ${JSON.stringify([...reader.byPartition])}\n`);
      process.stdout.write(`reader events: ${reader.events.join(' | ')}\n`);
    }
    process.stdout.write(wrong.length === 0 ? 'ferry demo: every count agrees\n' : 'ferry demo: FAILED\n');
    return { counts, offered, disagreements: wrong, metrics: { url: metrics.url, scraped }, traces: traced };
  } catch (error) {
    await resources.closeQuietly(); // the run's failure is the one to report, not a close failing after it
    throw error;
  } finally {
    await resources.close(); // on success (after a failure everything is closed already)
  }
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * The demo as a process (`npm run demo`, `node dist/src/main.js`): exit code 0 when every count
 * agrees, 1 otherwise or on an error. SIGINT / SIGTERM interrupt the run, close what it started
 * (its RabbitMQ queues removed) and exit with 128 + the signal; a second signal exits at once.
 */
export function demoMain(): void {
  process.env.FERRY_LOG_LEVEL ??= 'error';
  const interrupt = new AbortController();
  let interrupted: keyof typeof SIGNAL_EXIT_CODES | undefined;
  const onSignal = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
    if (interrupted) process.exit(SIGNAL_EXIT_CODES[signal]);
    interrupted = signal;
    process.stderr.write(
      `ferry demo: interrupted (${signal}), closing what it started; a second signal exits at once\n`,
    );
    interrupt.abort(new Error(`interrupted (${signal})`));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, onSignal);
  // The settings are read inside runDemo (its default): one refused rejects, as any failure does.
  runDemo(undefined, interrupt.signal)
    .then(
      (result) => {
        process.exitCode = result.disagreements.length === 0 ? 0 : 1;
      },
      (error: unknown) => {
        if (interrupted) {
          process.exitCode = SIGNAL_EXIT_CODES[interrupted];
          return;
        }
        // A setting refused at start: its message says which and why; a stack would only bury it.
        const shown =
          error instanceof FerryConfigError
            ? error.message
            : error instanceof Error
              ? (error.stack ?? error.message)
              : String(error);
        process.stderr.write(`ferry demo failed: ${shown}\n`);
        process.exitCode = 1;
      },
    )
    .finally(() => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, onSignal);
    });
}

if (require.main === module) demoMain();
