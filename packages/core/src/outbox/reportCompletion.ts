import type { OutboxMessage } from '../contracts';
import type { Logger } from '../observe/logger';
import type { FailReason, OutboxObserver } from './observer';
import type { CycleResult } from './relay';
import type { CompletedRow, Completion } from './sql/completeBatch';

export type Emit = <K extends keyof OutboxObserver>(
  name: K,
  event: Parameters<NonNullable<OutboxObserver[K]>>[0],
) => void;

/** Counts a completed batch and calls the observers; rows the fence rejected are lost claims. */
export function reportCompletion(args: {
  token: string;
  messages: readonly OutboxMessage[];
  completions: readonly Completion[];
  completed: readonly CompletedRow[];
  result: CycleResult;
  emit: Emit;
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
    const base = { id: message.id, type: message.type, attempt: message.attempt };
    const error = completion.error ?? '';
    if (row.status === 'SENT') {
      result.sent += 1;
      emit('sent', base);
    } else if (row.status === 'PENDING') {
      result.retried += 1;
      emit('retryScheduled', { ...base, error, nextAttemptAt: new Date(row.next_attempt_at) });
    } else {
      result.failed += 1;
      const reason: FailReason = completion.kind === 'permanent' ? 'permanent' : 'attempts_exhausted';
      emit('failed', { ...base, error, reason });
    }
  }
  if (lost.length > 0) {
    result.lost += lost.length;
    args.logger.warn(
      { claimToken: args.token, ids: lost },
      'claim lost before completion; outcomes discarded',
    );
    emit('leaseLost', { claimToken: args.token, ids: lost, reason: 'completion fence rejected the rows' });
  }
}
