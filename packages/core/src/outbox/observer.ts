import type { OutboxMessage } from '../contracts';

/**
 * Hooks called through safeEmit: a throwing or rejecting observer is logged and ignored,
 * never changing a row's state or stopping the relay.
 */
export interface OutboxObserver {
  emitted?(event: { ids: readonly string[]; types: readonly string[] }): unknown;
  claimed?(event: { claimToken: string; messages: readonly OutboxMessage[] }): unknown;
  sent?(event: { id: string; type: string; attempt: number }): unknown;
  retryScheduled?(event: {
    id: string;
    type: string;
    attempt: number;
    error: string;
    nextAttemptAt: Date;
  }): unknown;
  failed?(event: { id: string; type: string; attempt: number; error: string; reason: FailReason }): unknown;
  /** The batch's lease was lost (heartbeat said so, or completion found the rows taken): outcomes discarded. */
  leaseLost?(event: { claimToken: string; ids: readonly string[]; reason: string }): unknown;
  /** Expired leases were requeued (or failed by the poison guard). */
  recovered?(event: { requeued: number; poisoned: readonly string[] }): unknown;
  /** A later event of a key was claimed past a FAILED head (ordering.failedHead = 'skip'). */
  orderingSkipped?(event: { skippedIds: readonly string[] }): unknown;
}

export type FailReason = 'permanent' | 'attempts_exhausted' | 'poison_guard';
