/**
 * Review 78: `ferry_transport_consumer_lag` once the `partition` label overflows to `other`.
 * With the default maxLabelValues (100), a Kafka topic of 128 partitions (or partitions 0..99 of
 * one topic and any of another) puts every partition from the 101st on under `partition="other"`.
 * The README promises that totals stay exact when values overflow, and that each lag series lives
 * for as long as the consumer that reported it is assigned the partition: "a rebalance that takes
 * it, or the consumer's close(), removes it, never another consumer's".
 *
 * PartitionLags keeps one entry per label set, so every overflowed partition of a group shares
 * one entry and one gauge value: the last partition written. The `other` series then shows the
 * last lag reported (a stuck partition at 5,000 behind hidden by a healthy one at 0:
 * `max(ferry_transport_consumer_lag) > 1000` never fires, `sum(...)` is short), and its owner and
 * partition are the last reporter's, so a rebalance that takes one overflowed partition, or the
 * close of one consumer, removes the lag of the others (another consumer's included).
 * Likely location: packages/core/src/metrics/transport.ts, PartitionLags (set / drop).
 */
import { createFerryMetrics, type FerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText } from '../../../test-support/prometheusText';

const kafka = { transport: 'kafka', source: 'orders' } as const;
const GROUP = 'billing';
/** Partitions 0..99 take the partition label's 100 values; 100 and 101 are `other`. */
const FIRST = Array.from({ length: 100 }, (_, i) => i);

async function lagSeries(metrics: FerryMetrics): Promise<Record<string, number>> {
  const scraped = parsePrometheusText(await metrics.registry.metrics());
  return Object.fromEntries(
    scraped
      .find('ferry_transport_consumer_lag', {})
      .map((sample) => [sample.labels.partition ?? '', sample.value] as const),
  );
}

function lag(metrics: FerryMetrics, instance: string, partition: number, value: number): void {
  metrics.transport({ type: 'lag', ...kafka, instance, group: GROUP, partition, lag: value });
}

function connected(metrics: FerryMetrics, instance: string, partitions: readonly number[]): void {
  metrics.transport({ type: 'connected', ...kafka, instance, assignment: { orders: partitions } });
}

/** One consumer of a 102-partition topic at lag 0 on partitions 0..99. */
function withFirstHundred(instance = 'c-1'): FerryMetrics {
  const metrics = createFerryMetrics();
  connected(metrics, instance, [...FIRST, 100, 101]);
  for (const partition of FIRST) lag(metrics, instance, partition, 0);
  return metrics;
}

describe('consumer lag of partitions past maxLabelValues (partition="other")', () => {
  it('adds up the overflowed partitions: a stuck partition is not hidden by the last one reported', async () => {
    const metrics = withFirstHundred();
    lag(metrics, 'c-1', 100, 5_000); // stuck
    lag(metrics, 'c-1', 101, 0); // healthy, reported after it
    const series = await lagSeries(metrics);
    // Received: other = 0 (partition 101's), the 5,000 records behind on partition 100 invisible.
    expect(series.other).toBe(5_000);
    expect(Object.values(series).reduce((sum, value) => sum + value, 0)).toBe(5_000);
  });

  it('a rebalance that takes one overflowed partition keeps the lag of the one the consumer still owns', async () => {
    const metrics = withFirstHundred();
    lag(metrics, 'c-1', 100, 5_000);
    lag(metrics, 'c-1', 101, 0);
    // Partition 101 moves to a consumer of another process; c-1 keeps 0..100 (100 still stuck).
    connected(metrics, 'c-1', [...FIRST, 100]);
    const series = await lagSeries(metrics);
    // Received: no `other` series at all: the entry named partition 101, so it was removed.
    expect(series.other).toBe(5_000);
  });

  it("one consumer's close does not remove the overflowed lag another consumer reported", async () => {
    const metrics = withFirstHundred('c-1');
    connected(metrics, 'c-2', [101]);
    lag(metrics, 'c-2', 101, 700); // c-2's, still assigned
    lag(metrics, 'c-1', 100, 0); // c-1's, reported last: the shared entry is now c-1's
    metrics.transport({
      type: 'disconnected',
      ...kafka,
      instance: 'c-1',
      reason: 'closed',
      error: 'closed',
      retryInMs: null,
    });
    const series = await lagSeries(metrics);
    // Received: no `other` series: c-1's close removed c-2's 700 records of lag.
    expect(series.other).toBe(700);
  });
});
