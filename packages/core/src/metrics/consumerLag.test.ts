/**
 * `ferry_transport_consumer_lag` per consumer group (review 71): each series is one group's
 * committed offset on one partition, owned by the consumer (`instance`) that reported it last;
 * a consumer's close, or a rejoin that takes a partition from it, removes only its own series.
 */
import { parsePrometheusText } from '../../../../test-support/prometheusText';
import type { TransportConsumerEvent } from '../transport/events';
import { createFerryMetrics, type FerryMetrics } from './index';

type Lag = [group: string, source: string, partition: string, value: number];

async function lags(metrics: FerryMetrics): Promise<Lag[]> {
  const scraped = parsePrometheusText(await metrics.registry.metrics());
  return scraped
    .find('ferry_transport_consumer_lag', {})
    .map((sample): Lag => [
      sample.labels.group ?? '(none)',
      sample.labels.source ?? '',
      sample.labels.partition ?? '',
      sample.value,
    ])
    .sort();
}

const kafka = { transport: 'kafka' } as const;

function connected(
  instance: string,
  assignment: Readonly<Record<string, readonly number[]>>,
): TransportConsumerEvent {
  return { type: 'connected', ...kafka, source: Object.keys(assignment).join(','), instance, assignment };
}

function lag(instance: string, group: string, source: string, partition: number, value: number) {
  return { type: 'lag', ...kafka, instance, group, source, partition, lag: value } as const;
}

function disconnected(
  instance: string,
  reason: 'lost' | 'closed',
  retryInMs: number | null,
): TransportConsumerEvent {
  return { type: 'disconnected', ...kafka, source: 'orders', instance, reason, error: 'e', retryInMs };
}

describe('ferry_transport_consumer_lag', () => {
  it('keeps one series per group: a healthy group at lag 0 does not hide a stuck one on the same partition', async () => {
    const metrics = createFerryMetrics();
    metrics.transport(connected('audit-1', { orders: [0] }));
    metrics.transport(connected('billing-1', { orders: [0] }));
    metrics.transport(lag('audit-1', 'audit', 'orders', 0, 8));
    metrics.transport(lag('billing-1', 'billing', 'orders', 0, 0));
    expect(await lags(metrics)).toEqual([
      ['audit', 'orders', '0', 8],
      ['billing', 'orders', '0', 0],
    ]);
  });

  it("removes a closed consumer's series, and only its own", async () => {
    const metrics = createFerryMetrics();
    // Two members of group audit in this process (a[0] and a[1]) and one of group billing.
    metrics.transport(connected('audit-1', { orders: [0] }));
    metrics.transport(connected('audit-2', { orders: [1] }));
    metrics.transport(connected('billing-1', { orders: [0, 1] }));
    metrics.transport(lag('audit-1', 'audit', 'orders', 0, 8));
    metrics.transport(lag('audit-2', 'audit', 'orders', 1, 3));
    metrics.transport(lag('billing-1', 'billing', 'orders', 0, 0));
    metrics.transport(disconnected('audit-1', 'closed', null));
    expect(await lags(metrics)).toEqual([
      ['audit', 'orders', '1', 3],
      ['billing', 'orders', '0', 0],
    ]);
  });

  it('removes the series of a consumer that stopped for good (retryInMs null), keeps those of one that reconnects', async () => {
    const metrics = createFerryMetrics();
    metrics.transport(connected('audit-1', { orders: [0] }));
    metrics.transport(connected('billing-1', { orders: [0] }));
    metrics.transport(lag('audit-1', 'audit', 'orders', 0, 8));
    metrics.transport(lag('billing-1', 'billing', 'orders', 0, 5));
    // A lost session that comes back keeps its last lag: a stuck consumer stays visible.
    metrics.transport(disconnected('billing-1', 'lost', 1_000));
    metrics.transport(disconnected('audit-1', 'lost', null));
    expect(await lags(metrics)).toEqual([['billing', 'orders', '0', 5]]);
  });

  it("drops on a rejoin only the rejoining consumer's partitions, not another member's or another group's", async () => {
    const metrics = createFerryMetrics();
    metrics.transport(connected('audit-1', { orders: [0, 1] }));
    metrics.transport(connected('billing-1', { orders: [0, 1] }));
    metrics.transport(lag('audit-1', 'audit', 'orders', 0, 8));
    metrics.transport(lag('audit-1', 'audit', 'orders', 1, 4));
    metrics.transport(lag('billing-1', 'billing', 'orders', 0, 0));
    metrics.transport(lag('billing-1', 'billing', 'orders', 1, 0));
    // A second audit member joins: audit-1 keeps orders[0], audit-2 takes orders[1].
    metrics.transport(connected('audit-1', { orders: [0] }));
    metrics.transport(connected('audit-2', { orders: [1] }));
    expect(await lags(metrics)).toEqual([
      ['audit', 'orders', '0', 8],
      ['billing', 'orders', '0', 0],
      ['billing', 'orders', '1', 0],
    ]);
    metrics.transport(lag('audit-2', 'audit', 'orders', 1, 2));
    // The partition is audit-2's now: audit-1's rejoin without it, or its close, leaves it.
    metrics.transport(connected('audit-1', { orders: [0] }));
    metrics.transport(disconnected('audit-1', 'closed', null));
    expect(await lags(metrics)).toEqual([
      ['audit', 'orders', '1', 2],
      ['billing', 'orders', '0', 0],
      ['billing', 'orders', '1', 0],
    ]);
  });
});

it("drops the lag of a topic named like an Object property ('constructor') that a rejoin took away", async () => {
  const metrics = createFerryMetrics();
  metrics.transport(connected('k1', { constructor: [0], orders: [0] }));
  metrics.transport(lag('k1', 'g', 'constructor', 0, 4));
  metrics.transport(lag('k1', 'g', 'orders', 0, 2));
  metrics.transport(connected('k1', { orders: [0] }));
  expect(await lags(metrics)).toEqual([['g', 'orders', '0', 2]]);
});
