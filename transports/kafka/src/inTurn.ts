import type { PublishOutcome } from '@ferry/core';
import type { OutboundRecord } from './wire';

/**
 * What the records of one publish sent in turn (chunk after chunk, or one at a time) leave for
 * the later ones: once the cluster was unavailable nothing more is sent; a key's later records
 * are not sent after one of it that was not (per-key order holds); and, where the caller says a
 * failure was its topic's, that topic's later records are not tried either (each try would wait
 * for the client to give up on the topic again). One home for the three loops of KafkaPublisher.
 */
export class InTurn {
  private unavailable: string | null = null;
  private readonly failedKeys = new Set<string>();
  private readonly failedTopics = new Set<string>();

  /** Whether nothing more is sent (the cluster was unavailable, or the caller stopped the turn). */
  get stopped(): boolean {
    return this.unavailable !== null;
  }

  /** Nothing more is sent: every later record is `unavailable` for `reason` (the first one kept). */
  stop(reason: string): void {
    this.unavailable ??= reason;
  }

  /** The outcome of `record` when an earlier one holds it back, or null when it may be sent. */
  held(record: OutboundRecord): PublishOutcome | null {
    if (this.unavailable !== null) return { id: record.id, status: 'unavailable', error: this.unavailable };
    if (record.key !== null && this.failedKeys.has(record.key))
      return {
        id: record.id,
        status: 'retryable',
        error: 'an earlier message with the same key was not sent',
      };
    if (this.failedTopics.has(record.topic)) {
      if (record.key !== null) this.failedKeys.add(record.key);
      return {
        id: record.id,
        status: 'retryable',
        error: `an earlier message to topic ${record.topic} was not sent`,
      };
    }
    return null;
  }

  /** Learns the outcome of a record that was sent (or tried); `topicFailed`: the failure was its topic's. */
  learn(record: OutboundRecord, outcome: PublishOutcome, topicFailed = false): void {
    if (outcome.status === 'sent') return;
    if (record.key !== null) this.failedKeys.add(record.key);
    if (outcome.status === 'unavailable') this.stop(outcome.error ?? 'the Kafka cluster is unavailable');
    else if (topicFailed) this.failedTopics.add(record.topic);
  }
}
