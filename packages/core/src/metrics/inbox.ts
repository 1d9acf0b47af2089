import type { InboxEvent } from '../inbox/types';
import type { InfrastructureErrors, MetricFactory } from './factory';
import { observeMs } from './values';

/**
 * The inbox's counters and histograms, fed by its observer events. Labels: the consumer name
 * (bounded by the application's handlers), an outcome or reason from a fixed set, the worker's
 * operation name. Never a receipt or message id.
 */
export function inboxMetrics(
  make: MetricFactory,
  infrastructure: InfrastructureErrors,
): (event: InboxEvent) => void {
  const acceptances = make.counter(
    'inbox_acceptances_total',
    'Deliveries offered to the inbox, by outcome: accepted (a new receipt), duplicate, conflict (a duplicate id with another payload)',
    ['consumer', 'outcome'],
  );
  const attempts = make.counter(
    'inbox_attempts_total',
    'Handler attempts by outcome: completed, retry (a retry is scheduled), dead (the receipt is DEAD), lease_lost',
    ['consumer', 'outcome'],
  );
  const duration = make.histogram(
    'inbox_handler_duration_seconds',
    'Duration of the handler attempts that completed (handler and completion, in one transaction)',
    ['consumer'],
  );
  const dead = make.counter(
    'inbox_dead_total',
    'Receipts that became DEAD, by reason: permanent, invalid_payload, unsupported_schema, exhausted',
    ['consumer', 'reason'],
  );

  return (event) => {
    switch (event.type) {
      case 'accepted':
        acceptances.inc({ consumer: event.consumer, outcome: 'accepted' });
        return;
      case 'duplicate':
        acceptances.inc({ consumer: event.consumer, outcome: event.conflict ? 'conflict' : 'duplicate' });
        return;
      case 'completed':
        attempts.inc({ consumer: event.consumer, outcome: 'completed' });
        observeMs(duration, { consumer: event.consumer }, event.durationMs);
        return;
      case 'retry':
        attempts.inc({ consumer: event.consumer, outcome: 'retry' });
        return;
      case 'dead':
        attempts.inc({ consumer: event.consumer, outcome: 'dead' });
        dead.inc({ consumer: event.consumer, reason: event.reason });
        return;
      case 'lease-lost':
        attempts.inc({ consumer: event.consumer, outcome: 'lease_lost' });
        return;
      case 'infrastructure-error':
        infrastructure.inc({ component: 'inbox', operation: event.operation });
        return;
      default:
        return;
    }
  };
}
