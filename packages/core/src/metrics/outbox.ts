import { closedSet, type LabelBound } from '../observe/cardinality';
import type { FailReason, OutboxEvent } from '../outbox/events';
import type { InfrastructureErrors, MetricFactory } from './factory';
import { count, observeMs } from './values';

const FAIL_REASONS: readonly FailReason[] = ['permanent', 'attempts_exhausted', 'poison_guard'];

/**
 * The relay's counters and histograms, fed by its observer events. Labels: the event's `type`
 * (`event_type`, unless `eventTypeLabel` is false) and the relay's operation name (on the shared
 * infrastructure errors counter), each bounded by `bound` (a type is the application's data); a
 * reason from its closed set. Never an id.
 */
export function outboxMetrics(
  make: MetricFactory,
  bound: (labelName: string) => LabelBound,
  eventTypeLabel: boolean,
  infrastructure: InfrastructureErrors,
): (event: OutboxEvent) => void {
  const typeLabel: 'event_type'[] = eventTypeLabel ? ['event_type'] : [];
  const eventTypeOf = bound('event_type');
  const operationOf = bound('operation');
  const reasonOf = closedSet(FAIL_REASONS);
  const typed = (eventType: string) => (eventTypeLabel ? { event_type: eventTypeOf(eventType) } : {});
  const outcomes = make.counter(
    'outbox_publish_outcomes_total',
    'Publish attempts by outcome: sent (the broker confirmed, the event is SENT), retry (a retry is scheduled), failed (the event is FAILED)',
    [...typeLabel, 'outcome'],
  );
  const failed = make.counter(
    'outbox_failed_total',
    'Events that became FAILED, by reason: permanent, attempts_exhausted, poison_guard',
    [...typeLabel, 'reason'],
  );
  const latency = make.histogram(
    'outbox_publish_latency_seconds',
    "From an event's insertion (emit) to the broker's confirmation, per SENT event",
    typeLabel,
  );
  const cycles = make.histogram(
    'outbox_relay_cycle_duration_seconds',
    'Relay cycles (claim, publish, complete), empty ones included; _count counts the cycles',
    [],
  );
  const claimed = make.counter('outbox_claimed_total', 'Events claimed by relay cycles', []);
  const leaseLost = make.counter(
    'outbox_lease_lost_total',
    'Claimed events whose lease was lost: their outcomes were discarded and they are published again',
    [],
  );
  const recovered = make.counter(
    'outbox_recovered_total',
    'Expired claims requeued by lease recovery (no retry spent)',
    [],
  );
  const skipped = make.counter(
    'outbox_ordering_skipped_total',
    'Events claimed past a FAILED head of their ordering key (ordering.failedHead skip)',
    [],
  );
  // Counted, not set: relays sharing this observer each open and close their own circuit.
  const circuitOpen = make.gauge(
    'outbox_relay_circuit_open',
    'Relays feeding these metrics whose circuit is open (their broker is unavailable, claiming pauses); 0 when none',
    [],
  );
  let openCircuits = 0;
  const circuitOpened = make.counter(
    'outbox_relay_circuit_opened_total',
    'Times the relay circuit opened',
    [],
  );

  return (event) => {
    switch (event.type) {
      case 'sent':
        outcomes.inc({ ...typed(event.eventType), outcome: 'sent' });
        observeMs(latency, typed(event.eventType), event.ageMs);
        return;
      case 'retry-scheduled':
        outcomes.inc({ ...typed(event.eventType), outcome: 'retry' });
        return;
      case 'failed':
        outcomes.inc({ ...typed(event.eventType), outcome: 'failed' });
        failed.inc({ ...typed(event.eventType), reason: reasonOf(event.reason) });
        return;
      case 'cycle':
        observeMs(cycles, {}, event.durationMs);
        claimed.inc(count(event.claimed));
        return;
      case 'lease-lost':
        leaseLost.inc(event.ids.length);
        return;
      case 'recovered':
        recovered.inc(count(event.requeued));
        return;
      case 'ordering-skipped':
        skipped.inc(event.skippedIds.length);
        return;
      case 'circuit-opened':
        // Each relay's circuit goes closed -> opened (-> reopened ...) -> closed: the count of
        // first openings not yet closed is the relays open now.
        if (!event.reopened) openCircuits += 1;
        circuitOpen.set(openCircuits);
        circuitOpened.inc();
        return;
      case 'circuit-closed':
        openCircuits = Math.max(0, openCircuits - 1);
        circuitOpen.set(openCircuits);
        return;
      case 'infrastructure-error':
        infrastructure.inc({ component: 'outbox', operation: operationOf(event.operation) });
        return;
      default:
        return;
    }
  };
}
