import type { Registry } from 'prom-client';
import type { InboxEvent } from '../inbox/types';
import { defaultLogger, guardLogger, type Logger } from '../observe/logger';
import type { OutboxEvent } from '../outbox/events';
import type { TransportEvent } from '../transport/events';
import { labelBounds } from '../observe/cardinality';
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
  /**
   * Takes these metrics off `registry` (its other metrics stay), so a rebuilt application (a hot
   * reload, a test's second app) can call createFerryMetrics on it again; the stats gauges are
   * no longer read: no read starts after it (a registry still holding them, e.g. one made by
   * Registry.merge, gets their last values), and it resolves once the reads in flight settled
   * (each given up after `stats.statementTimeoutMs`), so their database can then be closed. The
   * observers then count into nothing. Safe twice.
   */
  close(): Promise<void>;
}

/**
 * Registers ferry's metrics (see the README's metrics table) and returns the observers that
 * feed them. Every label is bounded: event type, consumer, transport, queue or topic, status,
 * outcome, reason; never an id, and the tenant only with `tenantLabel` (on the stats gauges).
 * As the events' values come from data too (an event's destination or type, a delivery's
 * consumer), each label takes at most `maxLabelValues` of them, later ones counted as `other`,
 * and a closed-set label (outcome, reason) `other` for a value outside its set.
 */
export function createFerryMetrics(options: FerryMetricsOptions = {}): FerryMetrics {
  const resolved = resolveMetricsOptions(options);
  const prom = promClient();
  const registry = resolved.registry ?? new prom.Registry();
  const make = metricFactory(prom, registry, resolved.prefix, resolved.buckets);
  const bound = labelBounds(resolved.maxLabelValues);
  const infrastructure = infrastructureErrors(make);
  const outbox = outboxMetrics(make, bound, resolved.eventTypeLabel, infrastructure);
  const inbox = inboxMetrics(make, bound, infrastructure);
  // Made on first use: without stats, only a bound of the transport state reached logs.
  let guarded: Logger | undefined;
  const logger = (): Logger => (guarded ??= guardLogger(resolved.logger ?? defaultLogger('ferry.metrics')));
  const transport = transportMetrics(make, bound, resolved.maxLabelValues, logger);
  const closeStats = resolved.stats
    ? statsMetrics(make, bound, resolved.stats, resolved.tenantLabel, logger())
    : async () => undefined;
  make.register();
  return {
    registry,
    outbox,
    inbox,
    transport,
    close: async () => {
      make.unregister();
      await closeStats();
    },
  };
}
