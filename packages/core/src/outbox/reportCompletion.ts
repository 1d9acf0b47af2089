import type { OutboxMessage } from '../contracts';
import { describeError, MAX_OBSERVED_ERROR_CHARS, type Redactor } from '../redact/redact';
import type { Logger } from '../observe/logger';
import { openedBy, type CircuitTransition } from './circuit';
import { failedOperation } from './errors';
import type { FailReason, OutboxEvent } from './events';
import type { CompletedRow, Completion } from './sql/completeBatch';
import { dateOf } from '../sql/dateColumn';

/**
 * The counters a completed batch adds to. Declared here, where they are written, so this module
 * needs nothing from the relay; the relay's CycleResult has these fields among others.
 */
export interface CompletionCounts {
  sent: number;
  retried: number;
  failed: number;
  /** Rows whose outcome was discarded because the claim was lost. */
  lost: number;
}

/** Counts a completed batch and reports each row; rows the fence rejected are lost claims. */
export function reportCompletion(args: {
  token: string;
  messages: readonly OutboxMessage[];
  completions: readonly Completion[];
  completed: readonly CompletedRow[];
  result: CompletionCounts;
  emit: (event: OutboxEvent) => void;
  logger: Logger;
}): void {
  const { result, emit } = args;
  const byId = new Map(args.completed.map((row) => [row.id, row]));
  const kinds = new Map(args.completions.map((c) => [c.id, c]));
  const lost: string[] = [];
  for (const message of args.messages) {
    const row = byId.get(message.id);
    const completion = kinds.get(message.id);
    if (!row || !completion) {
      lost.push(message.id);
      continue;
    }
    const base = { id: message.id, eventType: message.type, attempt: message.attempt };
    const error = completion.error ?? '';
    if (row.status === 'SENT') {
      result.sent += 1;
      emit({ type: 'sent', ...base, ageMs: row.age_ms });
    } else if (row.status === 'PENDING') {
      result.retried += 1;
      emit({ type: 'retry-scheduled', ...base, error, nextAttemptAt: dateOf(row.next_attempt_at) });
    } else {
      result.failed += 1;
      const reason: FailReason = completion.kind === 'permanent' ? 'permanent' : 'attempts_exhausted';
      args.logger.warn(
        { id: message.id, type: message.type, attempt: message.attempt, reason, error },
        'outbox event FAILED',
      );
      emit({ type: 'failed', ...base, error, reason });
    }
  }
  if (lost.length > 0) {
    result.lost += lost.length;
    args.logger.warn(
      { claimToken: args.token, ids: lost },
      'claim lost before completion; outcomes discarded',
    );
    emit({
      type: 'lease-lost',
      claimToken: args.token,
      ids: lost,
      reason: 'completion fence rejected the rows',
    });
  }
}

/**
 * The log line and observer event of a circuit state change (none when `change` is undefined). A
 * circuit opened by a cycle of only the publisher's closed answers says "publisher closed", not
 * "broker unavailable" (its event's `error` is that answer): the broker may be fine (review 148).
 */
export function reportCircuitChange(
  change: CircuitTransition | undefined,
  emit: (event: OutboxEvent) => void,
  logger: Logger,
): void {
  if (change?.type === 'opened') {
    const { failures, openMs, error, reopened } = change;
    const cause = openedBy(change.publisherClosed);
    logger.warn({ failures, openMs, error, reopened }, `${cause}: circuit opened, claiming paused`);
    emit({ type: 'circuit-opened', failures, openMs, error, reopened });
  } else if (change?.type === 'closed') {
    const { openedForMs, relayClosed } = change;
    logger.info(
      { openedForMs, relayClosed },
      relayClosed ? 'relay closed with its circuit open' : 'broker reachable: circuit closed',
    );
    emit({ type: 'circuit-closed', openedForMs, relayClosed });
  }
}

/**
 * The log line and observer event of a failure the relay caught: the operation the error names
 * (or `fallback`), and the error as one line redacted with `redact` (the relay's option) and
 * bounded, in both. The error object itself is not logged: its message, stack and fields may
 * quote a connection string.
 */
export function reportInfrastructureError(
  args: {
    error: unknown;
    fallback: string;
    redact: Redactor;
    emit: (event: OutboxEvent) => void;
    logger: Logger;
  },
  line: { level: 'warn' | 'error'; message: string; fields: object },
): void {
  const { error, redact } = args;
  args.logger[line.level]({ ...line.fields, error: describeError(error, undefined, redact) }, line.message);
  args.emit({
    type: 'infrastructure-error',
    operation: failedOperation(error) ?? args.fallback,
    error: describeError(error, MAX_OBSERVED_ERROR_CHARS, redact),
  });
}
