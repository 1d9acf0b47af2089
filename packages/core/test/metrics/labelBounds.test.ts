/**
 * Problem (noticed by an earlier session): label values came from per-message data, so an
 * application whose events carry per-request destinations (a Kafka topic or SQS queue per tenant,
 * a RabbitMQ queue per user on the default exchange), whose deliveries name consumers, or whose
 * event types carry an id, made a series per value: a registry that grows without bound.
 *
 * Expected: every label takes at most `maxLabelValues` (default 100) distinct values per
 * createFerryMetrics, the first seen; every later value is counted under `other`. A label of a
 * closed set (outcome, reason) is `other` for a value outside it. Nothing is lost from the totals.
 */
import { FerryConfigError } from '@ferry/core';
import { createFerryMetrics, type FerryMetrics } from '@ferry/core/metrics';
import { parsePrometheusText, type Scrape } from '../../../../test-support/prometheusText';

const DISTINCT = 1_000;
const DEFAULT_BOUND = 100;

async function read(metrics: FerryMetrics): Promise<Scrape> {
  return parsePrometheusText(await metrics.registry.metrics());
}

/** The distinct values `label` takes among the samples of `name`. */
function valuesOf(scrape: Scrape, name: string, label: string): Set<string> {
  return new Set(scrape.find(name).map((sample) => sample.labels[label] as string));
}

function total(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return scrape.find(name, labels).reduce((sum, sample) => sum + sample.value, 0);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('metric labels stay bounded when events carry per-message values', () => {
  it('1,000 per-tenant publish destinations make at most 100 destinations and other', async () => {
    const metrics = createFerryMetrics();
    for (const i of range(DISTINCT)) {
      metrics.transport({
        type: 'published',
        transport: 'kafka',
        destination: `tenant-${i}.orders`,
        count: 1,
        durationMs: 3,
      });
      metrics.transport({
        type: 'publish-failed',
        transport: 'kafka',
        destination: `tenant-${i}.orders`,
        count: 2,
        outcome: 'permanent',
        error: `topic tenant-${i}.orders refused`,
      });
    }
    const s = await read(metrics);
    for (const name of [
      'ferry_transport_published_total',
      'ferry_transport_publish_failures_total',
      'ferry_transport_publish_duration_seconds_count',
    ]) {
      const destinations = valuesOf(s, name, 'destination');
      expect(destinations.size).toBe(DEFAULT_BOUND + 1);
      expect(destinations).toContain('other');
      expect(destinations).toContain('tenant-0.orders');
      expect(destinations).not.toContain(`tenant-${DEFAULT_BOUND}.orders`);
    }
    expect(total(s, 'ferry_transport_published_total')).toBe(DISTINCT);
    expect(s.value('ferry_transport_published_total', { destination: 'other' })).toBe(
      DISTINCT - DEFAULT_BOUND,
    );
    expect(total(s, 'ferry_transport_publish_failures_total')).toBe(2 * DISTINCT);
  });

  it('consumer sources, transports, dead-letter reasons, groups and partitions are bounded alike', async () => {
    const metrics = createFerryMetrics();
    for (const i of range(DISTINCT)) {
      const source = `user-${i}-queue`;
      metrics.transport({ type: 'received', transport: 'rabbitmq', source, count: 1 });
      metrics.transport({ type: 'settled', transport: `third-party-${i}`, source: 'q', count: 1 });
      metrics.transport({
        type: 'dead-lettered',
        transport: 'rabbitmq',
        source: 'q',
        reason: `refused: ${i}`,
        messageId: null,
      });
      metrics.transport({
        type: 'lag',
        transport: 'kafka',
        source: 'orders',
        instance: 'one',
        group: `group-${i}`,
        partition: i,
        lag: 1,
      });
    }
    const s = await read(metrics);
    // One bound per label name, over every metric: its first 100 values, then `other`.
    for (const label of ['transport', 'source', 'reason', 'group', 'partition']) {
      const values = new Set(s.samples.map((sample) => sample.labels[label]).filter((v) => v !== undefined));
      expect(values.size).toBe(DEFAULT_BOUND + 1);
      expect(values).toContain('other');
    }
    expect(total(s, 'ferry_transport_dead_lettered_total')).toBe(DISTINCT);
    expect(total(s, 'ferry_transport_received_total')).toBe(DISTINCT);
  });

  it('outbox event types with an id in them are bounded; so are operation names', async () => {
    const metrics = createFerryMetrics();
    for (const i of range(DISTINCT)) {
      const eventType = `user.${i}.updated`;
      metrics.outbox({ type: 'sent', id: `id-${i}`, eventType, attempt: 1, ageMs: 5 });
      metrics.outbox({
        type: 'failed',
        id: `id-${i}`,
        eventType,
        attempt: 1,
        error: 'x',
        reason: 'permanent',
      });
      metrics.outbox({ type: 'infrastructure-error', operation: `claim ${i}`, error: 'x' });
    }
    const s = await read(metrics);
    expect(valuesOf(s, 'ferry_outbox_publish_outcomes_total', 'event_type').size).toBe(DEFAULT_BOUND + 1);
    expect(valuesOf(s, 'ferry_outbox_publish_latency_seconds_count', 'event_type').size).toBe(
      DEFAULT_BOUND + 1,
    );
    expect(total(s, 'ferry_outbox_publish_outcomes_total', { outcome: 'sent' })).toBe(DISTINCT);
    expect(valuesOf(s, 'ferry_infrastructure_errors_total', 'operation').size).toBe(DEFAULT_BOUND + 1);
  });

  it('inbox consumers named by deliveries are bounded', async () => {
    const metrics = createFerryMetrics();
    for (const i of range(DISTINCT)) {
      const consumer = `tenant-${i}-handler`;
      metrics.inbox({ type: 'accepted', receiptId: `r-${i}`, consumer });
      metrics.inbox({
        type: 'completed',
        receiptId: `r-${i}`,
        consumer,
        attempt: 1,
        durationMs: 2,
        reconciled: false,
      });
    }
    const s = await read(metrics);
    expect(valuesOf(s, 'ferry_inbox_acceptances_total', 'consumer').size).toBe(DEFAULT_BOUND + 1);
    expect(valuesOf(s, 'ferry_inbox_attempts_total', 'consumer').size).toBe(DEFAULT_BOUND + 1);
    expect(valuesOf(s, 'ferry_inbox_handler_duration_seconds_count', 'consumer').size).toBe(
      DEFAULT_BOUND + 1,
    );
    expect(total(s, 'ferry_inbox_acceptances_total')).toBe(DISTINCT);
  });

  it('a closed-set label takes other for a value outside its set (a third party transport, a hostile event)', async () => {
    const metrics = createFerryMetrics();
    for (const i of range(DISTINCT)) {
      metrics.transport({
        type: 'publish-failed',
        transport: 'custom',
        destination: 'd',
        count: 1,
        outcome: `nack ${i}` as 'permanent',
        error: 'x',
      });
      metrics.outbox({
        type: 'failed',
        id: `id-${i}`,
        eventType: 't',
        attempt: 1,
        error: 'x',
        reason: `reason ${i}` as 'permanent',
      });
      metrics.inbox({
        type: 'dead',
        receiptId: `r-${i}`,
        consumer: 'orders',
        attempt: 1,
        reason: `because ${i}` as 'permanent',
        error: 'x',
      });
    }
    metrics.transport({
      type: 'publish-failed',
      transport: 'custom',
      destination: 'd',
      count: 1,
      outcome: 'retryable',
      error: 'x',
    });
    const s = await read(metrics);
    expect([...valuesOf(s, 'ferry_transport_publish_failures_total', 'outcome')].sort()).toEqual([
      'other',
      'retryable',
    ]);
    expect([...valuesOf(s, 'ferry_outbox_failed_total', 'reason')]).toEqual(['other']);
    expect([...valuesOf(s, 'ferry_inbox_dead_total', 'reason')]).toEqual(['other']);
  });

  it('maxLabelValues sets the bound; a value outside 1..10,000 is refused', async () => {
    const metrics = createFerryMetrics({ maxLabelValues: 3 });
    for (const i of range(10)) {
      metrics.transport({ type: 'received', transport: 'sqs', source: `q${i}`, count: 1 });
    }
    const s = await read(metrics);
    expect([...valuesOf(s, 'ferry_transport_received_total', 'source')].sort()).toEqual([
      'other',
      'q0',
      'q1',
      'q2',
    ]);
    for (const bad of [0, 10_001, 1.5, '5', null]) {
      expect(() => createFerryMetrics({ maxLabelValues: bad as number })).toThrow(FerryConfigError);
    }
  });
});
