import type { InboxEvent } from '../inbox/types';
import { closedSet, type LabelBound } from '../observe/cardinality';
import type { InfrastructureErrors, MetricFactory } from './factory';
import { observeMs } from './values';

type DeadReason = Extract<InboxEvent, { type: 'dead' }>['reason'];
const DEAD_REASONS: readonly DeadReason[] = [
  'permanent',
  'invalid_payload',
  'unsupported_schema',
  'exhausted',
];

/**
 * The inbox's counters and histograms, fed by its observer events. Labels: the consumer name
 * (a delivery names it: an inbox without handlers accepts any) and the worker's operation name,
 * each bounded by `bound`; an outcome or reason from its closed set. Never a receipt or message id.
 */
export function inboxMetrics(
  make: MetricFactory,
  bound: (labelName: string) => LabelBound,
  infrastructure: InfrastructureErrors,
): (event: InboxEvent) => void {
  const consumerOf = bound('consumer');
  const operationOf = bound('operation');
  const reasonOf = closedSet(DEAD_REASONS);
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
        acceptances.inc({ consumer: consumerOf(event.consumer), outcome: 'accepted' });
        return;
      case 'duplicate':
        acceptances.inc({
          consumer: consumerOf(event.consumer),
          outcome: event.conflict ? 'conflict' : 'duplicate',
        });
        return;
      case 'completed':
        attempts.inc({ consumer: consumerOf(event.consumer), outcome: 'completed' });
        observeMs(duration, { consumer: consumerOf(event.consumer) }, event.durationMs);
        return;
      case 'retry':
        attempts.inc({ consumer: consumerOf(event.consumer), outcome: 'retry' });
        return;
      case 'dead':
        attempts.inc({ consumer: consumerOf(event.consumer), outcome: 'dead' });
        dead.inc({ consumer: consumerOf(event.consumer), reason: reasonOf(event.reason) });
        return;
      case 'lease-lost':
        attempts.inc({ consumer: consumerOf(event.consumer), outcome: 'lease_lost' });
        return;
      case 'infrastructure-error':
        infrastructure.inc({ component: 'inbox', operation: operationOf(event.operation) });
        return;
      default:
        return;
    }
  };
}
