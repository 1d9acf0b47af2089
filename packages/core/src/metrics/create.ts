import type { Registry } from 'prom-client';
import type { InboxEvent } from '../inbox/types';
import { defaultLogger, guardLogger } from '../observe/logger';
import type { OutboxEvent } from '../outbox/events';
import type { TransportEvent } from '../transport/events';
import { infrastructureErrors, metricFactory } from './factory';
import { inboxMetrics } from './inbox';
import { resolveMetricsOptions, type FerryMetricsOptions } from './options';
import { outboxMetrics } from './outbox';
import { promClient } from './promClient';
import { statsMetrics } from './stats';
import { transportMetrics } from './transport';

/** ferry's observers, each feeding its metrics on `registry`. */
export interface FerryMetrics {
  readonly registry: Registry;
  /** The relay's observer (`createRelay({ observer })`). */
  readonly outbox: (event: OutboxEvent) => void;
  /** The inbox's observer (`createInbox(prisma, { observer })`). */
  readonly inbox: (event: InboxEvent) => void;
  /** Every transport consumer's and publisher's observer. */
  readonly transport: (event: TransportEvent) => void;
}

/**
 * Registers ferry's metrics (see the README's metrics table) and returns the observers that
 * feed them. Every label is bounded: event type, consumer, transport, queue or topic, status,
 * outcome, reason; never an id, and the tenant only with `tenantLabel` (on the stats gauges).
 */
export function createFerryMetrics(options: FerryMetricsOptions = {}): FerryMetrics {
  const resolved = resolveMetricsOptions(options);
  const prom = promClient();
  const registry = resolved.registry ?? new prom.Registry();
  const make = metricFactory(prom, registry, resolved.prefix, resolved.buckets);
  const infrastructure = infrastructureErrors(make);
  const metrics: FerryMetrics = {
    registry,
    outbox: outboxMetrics(make, resolved.eventTypeLabel, infrastructure),
    inbox: inboxMetrics(make, infrastructure),
    transport: transportMetrics(make),
  };
  if (resolved.stats) {
    statsMetrics(
      make,
      resolved.stats,
      resolved.tenantLabel,
      guardLogger(resolved.logger ?? defaultLogger('ferry.metrics')),
    );
  }
  make.register();
  return metrics;
}
