import type { PublishOutcome } from '@ferry/core';
import type { RabbitConnection } from './connection';

/**
 * A publish the broker did not confirm. `unavailable` (released without spending an attempt, the
 * relay's circuit counts it) when the connection was lost under it, or when the confirm deadline
 * passed with no answer from the broker: only a message's size makes its confirm slow (it is then
 * published last next time, publishChecked, and still not charged), while a node under a resource alarm (it blocks every publishing connection, for as long as the
 * alarm lasts) or a silent connection withholds every one, and spending attempts on that turned
 * events FAILED during a broker outage (fault-tests/broker-recovery/rabbitmq-outage, alarm), and
 * so is a confirm close() stopped waiting for (closedOutcome). A nack, or a publish the relay gave
 * up on itself (`stop`, the relay's signal: its lease, its shutdown), stays `retryable`.
 */
export function failedOutcome(
  id: string,
  result: { readonly error: string; readonly unanswered?: boolean },
  connectionLost: boolean,
  stop: AbortSignal,
  connection: RabbitConnection,
): PublishOutcome {
  if (connectionLost) return unavailable(id, result.error);
  if (result.unanswered === true && !stop.aborted)
    return unavailable(id, `${result.error}${blockedNote(connection)}`);
  return retryable(id, result.error);
}

/** "; the broker blocks the connection: <reason>" while it does (RabbitConnection.blocked), else "". */
export function blockedNote(connection: RabbitConnection): string {
  const reason = connection.blocked;
  return reason === null ? '' : `; the broker blocks the connection: ${reason}`;
}

export function retryable(id: string, error: string): PublishOutcome {
  return { id, status: 'retryable', error };
}

/** The broker could not be reached: released by the relay without spending an attempt. */
export function unavailable(id: string, error: string): PublishOutcome {
  return { id, status: 'unavailable', error };
}

export function permanent(id: string, error: string): PublishOutcome {
  return { id, status: 'permanent', error };
}
