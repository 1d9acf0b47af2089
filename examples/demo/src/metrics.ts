import { fromPrisma } from '@ferry/core';
import { createFerryMetrics, serveMetrics, type FerryMetrics } from '@ferry/core/metrics';
import type { PrismaClient } from '../generated/prisma/client';
import { CONSUMERS } from './pipeline';

export interface DemoMetrics {
  readonly metrics: FerryMetrics;
  /** Where Prometheus (or curl) reads them while the demo runs. */
  readonly url: string;
  /** GETs the endpoint, as a scraper would. */
  scrape(): Promise<string>;
  /** The counters the report checks, read from the registry. */
  counts(): Promise<MetricCounts>;
  close(): Promise<void>;
}

/** Of the `orders` consumer (the downstream consumer of the Kafka topic is not counted here). */
export interface MetricCounts {
  readonly accepted: number;
  readonly duplicates: number;
  readonly completed: number;
  /** Events the relay marked SENT. */
  readonly sent: number;
  /** Deliveries the RabbitMQ consumer dead-lettered. */
  readonly deadLettered: number;
}

/** ferry's metrics for the pipeline, with the outbox and inbox tables read on scrape, served on `port` (0: any free port). */
export async function startMetrics(prisma: PrismaClient, port: number): Promise<DemoMetrics> {
  const consumer = CONSUMERS.orders;
  const metrics = createFerryMetrics({ stats: { db: fromPrisma(prisma) } });
  const server = await serveMetrics({ registry: metrics.registry, port });
  // One counter's series, without collecting the others (the stats gauges read the database).
  const sum = async (name: string, labels: Record<string, string>): Promise<number> => {
    const metric = await metrics.registry.getSingleMetric(name)?.get();
    return (metric?.values ?? [])
      .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
      .reduce((total, v) => total + v.value, 0);
  };
  return {
    metrics,
    url: server.url,
    async scrape() {
      const response = await fetch(server.url, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`GET ${server.url}: ${response.status}`);
      return response.text();
    },
    async counts() {
      return {
        accepted: await sum('ferry_inbox_acceptances_total', { consumer, outcome: 'accepted' }),
        duplicates: await sum('ferry_inbox_acceptances_total', { consumer, outcome: 'duplicate' }),
        completed: await sum('ferry_inbox_attempts_total', { consumer, outcome: 'completed' }),
        sent: await sum('ferry_outbox_publish_outcomes_total', { outcome: 'sent' }),
        deadLettered: await sum('ferry_transport_dead_lettered_total', { transport: 'rabbitmq' }),
      };
    },
    close: () => server.close(),
  };
}
