/**
 * Review 127: the metrics' state kept per observer-supplied value stays bounded.
 *
 * Labels were bounded by `maxLabelValues` (review 105), but two maps of transportMetrics were
 * not: the consumer lag kept apart per real partition (PartitionLags: every overflowed partition
 * of a series has its own entry, so a transport reporting ever-new partitions or topics grows it
 * without bound, and every report sums the whole series), and the consumers counted per source
 * (Connections: ever-new `instance` names, never closed, grow its sets). Expected, as the
 * README's metrics section documents: a lag series sums at most `maxLabelValues` partitions
 * (the first reported; a later one's lag is not counted until a slot is freed by a rebalance or
 * a close), a source counts at most `maxLabelValues` consumers, and each bound reached is said
 * once on the metrics' logger (warn).
 * Location: packages/core/src/metrics/transport.ts (PartitionLags, Connections).
 */
import type { Logger } from '@ferry/core';
import { createFerryMetrics, METRICS_LABEL_VALUES, type FerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText } from '../../../test-support/prometheusText';

const DISTINCT = 50_000;
const BOUND = METRICS_LABEL_VALUES.default;
const kafka = { transport: 'kafka', source: 'orders' } as const;

function recordingLogger(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const ignore = () => undefined;
  const warn = (fields: object | string, message?: string) => {
    warnings.push(typeof fields === 'string' ? fields : (message ?? ''));
  };
  return { logger: { debug: ignore, info: ignore, warn, error: ignore }, warnings };
}

async function samples(metrics: FerryMetrics, name: string) {
  return parsePrometheusText(await metrics.registry.metrics()).find(name);
}

async function value(metrics: FerryMetrics, name: string): Promise<number> {
  return (await samples(metrics, name)).reduce((sum, sample) => sum + sample.value, 0);
}

describe('consumer lag of ever-new partitions and topics', () => {
  /**
   * 50,000 real partitions, lag 1 each: topics t-0..t-499 (t-0..t-99 take the topic label's
   * values, the others are `other`), partitions 0..99 each. Series (t-k, p) hold one partition,
   * each (other, p) 400 of them.
   */
  function reportAll(metrics: FerryMetrics): void {
    for (let i = 0; i < DISTINCT; i += 1) {
      metrics.transport({
        type: 'lag',
        transport: 'kafka',
        source: `t-${i % 500}`,
        instance: 'c-1',
        group: 'billing',
        partition: Math.floor(i / 500),
        lag: 1,
      });
    }
  }

  it('each lag series sums at most maxLabelValues partitions, said once on the logger', async () => {
    const { logger, warnings } = recordingLogger();
    const metrics = createFerryMetrics({ logger });
    reportAll(metrics);
    const lag = await samples(metrics, 'ferry_transport_consumer_lag');
    expect(lag).toHaveLength(BOUND * BOUND + BOUND);
    // Received on main: every (other, p) series at 400, every partition kept.
    expect(Math.max(...lag.map((sample) => sample.value))).toBe(BOUND);
    const overflowed = lag.filter((sample) => sample.labels.source === 'other');
    expect(overflowed.map((sample) => sample.value)).toEqual(overflowed.map(() => BOUND));
    expect(warnings.filter((line) => /lag/.test(line))).toHaveLength(1);
  });

  it('a kept partition still updates once its series is full; a close frees its slots', async () => {
    const { logger } = recordingLogger();
    const metrics = createFerryMetrics({ logger });
    reportAll(metrics);
    // t-100 partition 0 was the first partition of series (other, 0): kept.
    const lag = { type: 'lag', transport: 'kafka', instance: 'c-1', group: 'billing' } as const;
    metrics.transport({ ...lag, source: 't-100', partition: 0, lag: 1_001 });
    const partition0 = parsePrometheusText(await metrics.registry.metrics()).value(
      'ferry_transport_consumer_lag',
      { source: 'other', partition: '0' },
    );
    expect(partition0).toBe(BOUND - 1 + 1_001);
    // c-1 closes: every partition it reported is forgotten; c-2's next report counts.
    metrics.transport({
      type: 'disconnected',
      ...kafka,
      instance: 'c-1',
      reason: 'closed',
      error: '',
      retryInMs: null,
    });
    expect(await samples(metrics, 'ferry_transport_consumer_lag')).toHaveLength(0);
    metrics.transport({ ...lag, instance: 'c-2', source: 't-499', partition: 0, lag: 7 });
    expect(await value(metrics, 'ferry_transport_consumer_lag')).toBe(7);
  });
});

describe('consumers of ever-new instance names', () => {
  const connected = (metrics: FerryMetrics, instance: string) =>
    metrics.transport({ type: 'connected', ...kafka, instance });
  const disconnected = (metrics: FerryMetrics, instance: string, reason: 'lost' | 'closed') =>
    metrics.transport({
      type: 'disconnected',
      ...kafka,
      instance,
      reason,
      error: 'gone',
      retryInMs: reason === 'lost' ? 1_000 : null,
    });
  const instances = Array.from({ length: DISTINCT }, (_, i) => `c-${i}`);

  it('a source counts at most maxLabelValues consumers, said once on the logger', async () => {
    const { logger, warnings } = recordingLogger();
    const metrics = createFerryMetrics({ logger });
    for (const instance of instances) connected(metrics, instance);
    // Received on main: 50,000.
    expect(await value(metrics, 'ferry_transport_connected')).toBe(BOUND);
    for (const instance of instances) disconnected(metrics, instance, 'lost');
    expect(await value(metrics, 'ferry_transport_connected')).toBe(0);
    for (const instance of instances) connected(metrics, instance);
    // Received on main: 50,000 reconnects (every instance kept as lost).
    expect(await value(metrics, 'ferry_transport_reconnects_total')).toBe(BOUND);
    expect(warnings.filter((line) => /consumers/.test(line))).toHaveLength(1);
  });

  it('closed consumers free their places', async () => {
    const metrics = createFerryMetrics({ logger: recordingLogger().logger });
    for (const instance of instances) connected(metrics, instance);
    for (const instance of instances) disconnected(metrics, instance, 'closed');
    expect(await value(metrics, 'ferry_transport_connected')).toBe(0);
    connected(metrics, 'fresh');
    connected(metrics, 'fresh-2');
    expect(await value(metrics, 'ferry_transport_connected')).toBe(2);
  });
});
