import { randomUUID } from 'node:crypto';
import { Counter, Registry } from 'prom-client';
import { parsePrometheusText, type Scrape } from '../../../../test-support/prometheusText';
import type { InboxEvent } from '../inbox/types';
import type { OutboxEvent } from '../outbox/events';
import type { TransportEvent } from '../transport/events';
import { createFerryMetrics, type FerryMetrics } from './index';

async function read(metrics: FerryMetrics): Promise<Scrape> {
  return parsePrometheusText(await metrics.registry.metrics());
}

const ids: string[] = [randomUUID(), randomUUID(), randomUUID()];

const outboxEvents: OutboxEvent[] = [
  { type: 'claimed', claimToken: ids[0]!, ids, types: ['order.placed', 'order.placed', 'invoice'] },
  { type: 'sent', id: ids[0]!, eventType: 'order.placed', attempt: 1, ageMs: 40 },
  { type: 'sent', id: ids[1]!, eventType: 'order.placed', attempt: 2, ageMs: 2_000 },
  {
    type: 'retry-scheduled',
    id: ids[2]!,
    eventType: 'invoice',
    attempt: 1,
    error: 'nack',
    nextAttemptAt: new Date(),
  },
  { type: 'failed', id: ids[2]!, eventType: 'invoice', attempt: 5, error: 'x', reason: 'attempts_exhausted' },
  {
    type: 'cycle',
    claimed: 3,
    sent: 2,
    retried: 1,
    failed: 0,
    lost: 0,
    unavailable: 0,
    released: 0,
    durationMs: 12,
  },
  {
    type: 'cycle',
    claimed: 0,
    sent: 0,
    retried: 0,
    failed: 0,
    lost: 0,
    unavailable: 0,
    released: 0,
    durationMs: 1,
  },
  { type: 'lease-lost', claimToken: ids[0]!, ids: ids.slice(0, 2), reason: 'heartbeat' },
  { type: 'recovered', requeued: 4, poisoned: [] },
  { type: 'ordering-skipped', skippedIds: [ids[1]!] },
  { type: 'circuit-opened', failures: 3, openMs: 1_000, error: 'down', reopened: false },
  { type: 'infrastructure-error', operation: 'claim', error: 'ECONNRESET' },
];

const inboxEvents: InboxEvent[] = [
  { type: 'accepted', receiptId: ids[0]!, consumer: 'orders' },
  { type: 'accepted', receiptId: ids[1]!, consumer: 'orders' },
  { type: 'duplicate', receiptId: ids[0]!, consumer: 'orders', conflict: false },
  { type: 'duplicate', receiptId: ids[0]!, consumer: 'orders', conflict: true },
  {
    type: 'completed',
    receiptId: ids[0]!,
    consumer: 'orders',
    attempt: 1,
    durationMs: 30,
    reconciled: false,
  },
  { type: 'retry', receiptId: ids[1]!, consumer: 'orders', attempt: 1, delayMs: 100, error: 'e' },
  { type: 'dead', receiptId: ids[1]!, consumer: 'orders', attempt: 2, reason: 'permanent', error: 'e' },
  { type: 'lease-lost', receiptId: ids[2]!, consumer: 'billing', attempt: 1 },
  { type: 'infrastructure-error', operation: 'claim', error: 'e' },
];

const transportEvents: TransportEvent[] = [
  { type: 'connected', transport: 'rabbitmq', source: 'orders', instance: 'c1' },
  { type: 'received', transport: 'rabbitmq', source: 'orders', count: 5 },
  { type: 'accepted', transport: 'rabbitmq', source: 'orders', count: 4 },
  { type: 'settled', transport: 'rabbitmq', source: 'orders', count: 4 },
  {
    type: 'dead-lettered',
    transport: 'rabbitmq',
    source: 'orders',
    reason: 'missing_identity',
    messageId: ids[0]!,
  },
  {
    type: 'acceptance-unavailable',
    transport: 'rabbitmq',
    source: 'orders',
    count: 5,
    attempt: 1,
    delayMs: 100,
    error: 'down',
  },
  {
    type: 'disconnected',
    transport: 'rabbitmq',
    source: 'orders',
    instance: 'c1',
    reason: 'lost',
    error: 'channel closed',
    retryInMs: 100,
  },
  { type: 'connected', transport: 'rabbitmq', source: 'orders', instance: 'c1' },
  { type: 'lag', transport: 'kafka', source: 'events', instance: 'k', group: 'g', partition: 2, lag: 17 },
  { type: 'lag', transport: 'kafka', source: 'events', instance: 'k', group: 'g', partition: 2, lag: 3 },
  { type: 'published', transport: 'kafka', destination: 'invoices', count: 10, durationMs: 8 },
  {
    type: 'publish-failed',
    transport: 'kafka',
    destination: 'invoices',
    count: 2,
    outcome: 'unavailable',
    error: 'x',
  },
];

describe('createFerryMetrics observers', () => {
  it('counts the relay events by event type and outcome, with latency and cycle histograms', async () => {
    const metrics = createFerryMetrics();
    for (const event of outboxEvents) metrics.outbox(event);
    const s = await read(metrics);
    const outcome = (type: string, o: string) =>
      s.value('ferry_outbox_publish_outcomes_total', { event_type: type, outcome: o });
    expect([
      outcome('order.placed', 'sent'),
      outcome('invoice', 'retry'),
      outcome('invoice', 'failed'),
    ]).toEqual([2, 1, 1]);
    expect(
      s.value('ferry_outbox_failed_total', { event_type: 'invoice', reason: 'attempts_exhausted' }),
    ).toBe(1);
    expect(s.value('ferry_outbox_publish_latency_seconds_count', { event_type: 'order.placed' })).toBe(2);
    expect(s.value('ferry_outbox_publish_latency_seconds_sum', { event_type: 'order.placed' })).toBeCloseTo(
      2.04,
    );
    expect(
      s.value('ferry_outbox_publish_latency_seconds_bucket', { event_type: 'order.placed', le: '0.05' }),
    ).toBe(1);
    expect(s.value('ferry_outbox_relay_cycle_duration_seconds_count')).toBe(2);
    expect(s.value('ferry_outbox_claimed_total')).toBe(3);
    expect(s.value('ferry_outbox_lease_lost_total')).toBe(2);
    expect(s.value('ferry_outbox_recovered_total')).toBe(4);
    expect(s.value('ferry_outbox_ordering_skipped_total')).toBe(1);
    expect(s.value('ferry_outbox_relay_circuit_open')).toBe(1);
    expect(s.value('ferry_outbox_relay_circuit_opened_total')).toBe(1);
    expect(s.value('ferry_infrastructure_errors_total', { component: 'outbox', operation: 'claim' })).toBe(1);
    metrics.outbox({ type: 'circuit-closed', openedForMs: 1_000, relayClosed: false });
    expect((await read(metrics)).value('ferry_outbox_relay_circuit_open')).toBe(0);
  });

  it('counts the inbox events by consumer and outcome, with the handler duration', async () => {
    const metrics = createFerryMetrics();
    for (const event of inboxEvents) metrics.inbox(event);
    const s = await read(metrics);
    const acceptances = (outcome: string) =>
      s.value('ferry_inbox_acceptances_total', { consumer: 'orders', outcome });
    expect([acceptances('accepted'), acceptances('duplicate'), acceptances('conflict')]).toEqual([2, 1, 1]);
    const attempts = (consumer: string, outcome: string) =>
      s.value('ferry_inbox_attempts_total', { consumer, outcome });
    expect([
      attempts('orders', 'completed'),
      attempts('orders', 'retry'),
      attempts('orders', 'dead'),
      attempts('billing', 'lease_lost'),
    ]).toEqual([1, 1, 1, 1]);
    expect(s.value('ferry_inbox_dead_total', { consumer: 'orders', reason: 'permanent' })).toBe(1);
    expect(s.value('ferry_inbox_handler_duration_seconds_sum', { consumer: 'orders' })).toBeCloseTo(0.03);
    expect(s.value('ferry_infrastructure_errors_total', { component: 'inbox', operation: 'claim' })).toBe(1);
  });

  it('counts the transport events by transport and queue or topic', async () => {
    const metrics = createFerryMetrics();
    for (const event of transportEvents) metrics.transport(event);
    const s = await read(metrics);
    const orders = { transport: 'rabbitmq', source: 'orders' };
    expect(s.value('ferry_transport_received_total', orders)).toBe(5);
    expect(s.value('ferry_transport_accepted_total', orders)).toBe(4);
    expect(s.value('ferry_transport_settled_total', orders)).toBe(4);
    expect(s.value('ferry_transport_dead_lettered_total', { ...orders, reason: 'missing_identity' })).toBe(1);
    expect(s.value('ferry_transport_acceptance_failures_total', { ...orders, kind: 'unavailable' })).toBe(1);
    expect(s.value('ferry_transport_reconnects_total', orders)).toBe(1);
    expect(s.value('ferry_transport_connected', orders)).toBe(1);
    expect(
      s.value('ferry_transport_consumer_lag', { transport: 'kafka', source: 'events', partition: '2' }),
    ).toBe(3);
    const invoices = { transport: 'kafka', destination: 'invoices' };
    expect(s.value('ferry_transport_published_total', invoices)).toBe(10);
    expect(s.value('ferry_transport_publish_failures_total', { ...invoices, outcome: 'unavailable' })).toBe(
      2,
    );
    expect(s.value('ferry_transport_publish_duration_seconds_count', invoices)).toBe(1);
  });

  it('counts a reconnect only after a connection was lost: not a Kafka rebalance, a second consumer of the source or a first connection', async () => {
    const metrics = createFerryMetrics();
    const events = { transport: 'kafka', source: 'events', instance: 'k1' };
    // One member joins, then rejoins twice as the group rebalances; its connection never dropped.
    metrics.transport({ type: 'connected', ...events, assignment: { events: [0, 1] } });
    metrics.transport({ type: 'connected', ...events, assignment: { events: [0] } });
    metrics.transport({ type: 'connected', ...events, assignment: { events: [0, 1] } });
    // An SQS consumer whose first polls failed: its first connection is no reconnect.
    const queue = { transport: 'sqs', source: 'q', instance: 's1' };
    metrics.transport({
      type: 'disconnected',
      ...queue,
      reason: 'lost',
      error: 'ECONNREFUSED',
      retryInMs: 100,
    });
    metrics.transport({ type: 'connected', ...queue });
    // Two RabbitMQ consumers of one queue in one process, each connecting once.
    const orders = { transport: 'rabbitmq', source: 'orders' };
    metrics.transport({ type: 'connected', ...orders, instance: 'r1' });
    metrics.transport({ type: 'connected', ...orders, instance: 'r2' });
    let s = await read(metrics);
    expect(s.value('ferry_transport_reconnects_total', { transport: 'kafka', source: 'events' }) ?? 0).toBe(
      0,
    );
    expect(s.value('ferry_transport_reconnects_total', orders) ?? 0).toBe(0);
    expect(s.value('ferry_transport_reconnects_total', { transport: 'sqs', source: 'q' }) ?? 0).toBe(0);

    // One of them loses its channel twice before it is back: one reconnect.
    const lost = { reason: 'lost', error: 'channel closed' } as const;
    metrics.transport({ type: 'disconnected', ...orders, instance: 'r1', ...lost, retryInMs: 100 });
    metrics.transport({ type: 'disconnected', ...orders, instance: 'r1', ...lost, retryInMs: 200 });
    metrics.transport({ type: 'connected', ...orders, instance: 'r1' });
    s = await read(metrics);
    expect(s.value('ferry_transport_reconnects_total', orders)).toBe(1);
  });

  it('counts the consumers connected per source: one disconnect leaves the other counted, close() takes each off', async () => {
    const metrics = createFerryMetrics();
    const orders = { transport: 'rabbitmq', source: 'orders' };
    const closed = {
      type: 'disconnected',
      ...orders,
      reason: 'closed',
      error: 'consumer closed',
      retryInMs: null,
    } as const;
    metrics.transport({ type: 'connected', ...orders, instance: 'r1' });
    metrics.transport({ type: 'connected', ...orders, instance: 'r2' });
    metrics.transport({ type: 'connected', ...orders, instance: 'r2' });
    expect((await read(metrics)).value('ferry_transport_connected', orders)).toBe(2);

    metrics.transport({
      type: 'disconnected',
      ...orders,
      instance: 'r1',
      reason: 'lost',
      error: 'e',
      retryInMs: 100,
    });
    expect((await read(metrics)).value('ferry_transport_connected', orders)).toBe(1);
    metrics.transport({ type: 'connected', ...orders, instance: 'r1' });
    metrics.transport({ ...closed, instance: 'r2' });
    expect((await read(metrics)).value('ferry_transport_connected', orders)).toBe(1);
    metrics.transport({ ...closed, instance: 'r1' });
    const s = await read(metrics);
    expect(s.value('ferry_transport_connected', orders)).toBe(0);
    expect(s.value('ferry_transport_reconnects_total', orders)).toBe(1);
  });

  it('drops the lag of the partitions a rebalance took from the consumer', async () => {
    const metrics = createFerryMetrics();
    const kafka = { transport: 'kafka', instance: 'k1' };
    metrics.transport({ type: 'connected', ...kafka, source: 'a,b', assignment: { a: [0, 1], b: [0] } });
    metrics.transport({ type: 'lag', ...kafka, group: 'g', source: 'a', partition: 0, lag: 5 });
    metrics.transport({ type: 'lag', ...kafka, group: 'g', source: 'a', partition: 1, lag: 7 });
    metrics.transport({ type: 'lag', ...kafka, group: 'g', source: 'b', partition: 0, lag: 9 });
    // Another consumer's series, which this one's rejoin leaves alone.
    metrics.transport({
      type: 'lag',
      ...kafka,
      instance: 'k2',
      group: 'g2',
      source: 'other',
      partition: 3,
      lag: 11,
    });
    // Another member joined: this one keeps a[1] only (b is gone from its assignment).
    metrics.transport({ type: 'connected', ...kafka, source: 'a,b', assignment: { a: [1] } });
    const lags = (await read(metrics))
      .find('ferry_transport_consumer_lag', {})
      .map((sample) => [sample.labels.source, sample.labels.partition, sample.value]);
    expect(lags.sort()).toEqual([
      ['a', '1', 7],
      ['other', '3', 11],
    ]);
  });

  it('never throws and keeps the rest of an event when one of its numbers is NaN, infinite or negative', async () => {
    const metrics = createFerryMetrics();
    const hostile = [Number.NaN, Number.POSITIVE_INFINITY, -5];
    for (const bad of hostile) {
      const cycle = { claimed: 1, sent: 0, retried: 0, failed: 0, lost: 0, unavailable: 0, released: 0 };
      expect(() => metrics.outbox({ type: 'cycle', ...cycle, durationMs: bad })).not.toThrow();
      expect(() =>
        metrics.outbox({ type: 'sent', id: ids[0]!, eventType: 't', attempt: 1, ageMs: bad }),
      ).not.toThrow();
      expect(() =>
        metrics.transport({
          type: 'published',
          transport: 'kafka',
          destination: 'd',
          count: bad,
          durationMs: 1,
        }),
      ).not.toThrow();
      expect(() =>
        metrics.transport({ type: 'received', transport: 'kafka', source: 's', count: bad }),
      ).not.toThrow();
      expect(() =>
        metrics.transport({
          type: 'lag',
          transport: 'kafka',
          source: 's',
          instance: 'k',
          group: 'g',
          partition: 0,
          lag: bad,
        }),
      ).not.toThrow();
    }
    const s = await read(metrics);
    // Each cycle's claimed events are counted even though its duration was unusable.
    expect(s.value('ferry_outbox_claimed_total')).toBe(3);
    expect(s.value('ferry_outbox_publish_outcomes_total', { event_type: 't', outcome: 'sent' })).toBe(3);
    // No negative or non-finite sample: a histogram sum never goes down, a counter never moves.
    expect(
      s.value('ferry_outbox_publish_latency_seconds_sum', { event_type: 't' }) ?? 0,
    ).toBeGreaterThanOrEqual(0);
    expect(s.value('ferry_outbox_relay_cycle_duration_seconds_sum') ?? 0).toBeGreaterThanOrEqual(0);
    expect(
      s.value('ferry_transport_publish_duration_seconds_count', { transport: 'kafka', destination: 'd' }),
    ).toBe(3);
    expect(s.value('ferry_transport_received_total', { transport: 'kafka', source: 's' }) ?? 0).toBe(0);
    expect(s.samples.filter((sample) => !Number.isFinite(sample.value) || sample.value < 0)).toEqual([]);
  });

  it('puts no id into any label, whatever the events carried', async () => {
    const metrics = createFerryMetrics();
    for (const event of outboxEvents) metrics.outbox(event);
    for (const event of inboxEvents) metrics.inbox(event);
    for (const event of transportEvents) metrics.transport(event);
    const values = (await read(metrics)).samples.flatMap((s) => Object.values(s.labels));
    expect(values.length).toBeGreaterThan(50);
    expect(values.filter((v) => ids.includes(v) || /[0-9a-f]{8}-[0-9a-f]{4}-/.test(v))).toEqual([]);
  });

  it('leaves the event type out with eventTypeLabel false, and prefixes every name', async () => {
    const metrics = createFerryMetrics({ eventTypeLabel: false, prefix: 'app_ferry_' });
    for (const event of outboxEvents) metrics.outbox(event);
    const s = await read(metrics);
    expect(s.samples.every((sample) => sample.name.startsWith('app_ferry_'))).toBe(true);
    expect(s.samples.filter((sample) => 'event_type' in sample.labels)).toEqual([]);
    expect(s.value('app_ferry_outbox_publish_outcomes_total', { outcome: 'sent' })).toBe(2);
  });

  it('registers on a given registry, and refuses one that already holds its names', async () => {
    const registry = new Registry();
    const metrics = createFerryMetrics({ registry });
    expect(metrics.registry).toBe(registry);
    expect(() => createFerryMetrics({ registry })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'registry' }),
    );
    expect(() => createFerryMetrics({ registry, prefix: 'second_' })).not.toThrow();
  });

  it('registers nothing when a name further down the list is taken (no half-registered set)', async () => {
    const registry = new Registry();
    const taken = new Counter({
      name: 'ferry_transport_received_total',
      help: 'the application',
      registers: [registry],
    });
    expect(() => createFerryMetrics({ registry })).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option: 'registry' }),
    );
    expect(registry.getMetricsAsArray()).toEqual([taken]);
    expect(() => createFerryMetrics({ registry, prefix: 'second_' })).not.toThrow();
  });

  it.each([
    [{ prefix: 'bad-prefix' }, 'prefix'],
    [{ buckets: [1, 0.5] }, 'buckets'],
    [{ tenantLabel: 'yes' }, 'tenantLabel'],
    [{ stats: { db: {} } }, 'stats.db'],
    [{ stats: { db: { query: async () => [] } } }, 'stats.db'],
    [
      {
        stats: {
          db: {
            inTransaction: false,
            query: async () => [],
            execute: async () => 0,
            transaction: async () => 0,
          },
          timeoutMs: 0,
        },
      },
      'stats.timeoutMs',
    ],
    [{ statz: {} }, 'statz'],
  ])('refuses %j with a FerryConfigError naming %s', (options, option) => {
    expect(() => createFerryMetrics(options as never)).toThrow(
      expect.objectContaining({ code: 'FERRY_CONFIG_INVALID', option }),
    );
  });
});
