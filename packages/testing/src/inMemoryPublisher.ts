import type { OutboxMessage, Publisher, PublishOutcome } from '@ferry/core';

/** What the in-memory broker does with one message. */
export type PublishDecision = 'sent' | { readonly retryable: string } | { readonly permanent: string };

export interface InMemoryPublisherOptions {
  /** Decides each message's outcome; default: every message is sent. May be async (e.g. to hang). */
  decide?: (message: OutboxMessage) => PublishDecision | Promise<PublishDecision>;
}

/**
 * A broker in memory for tests of applications and of the relay. `attempts` records every
 * message handed to it; `delivered` only those it reported sent (what a consumer would get).
 * Aborting the signal before a decision makes the remaining messages unreported (retryable).
 */
export class InMemoryPublisher implements Publisher {
  readonly attempts: OutboxMessage[] = [];
  readonly delivered: OutboxMessage[] = [];
  private readonly decide: NonNullable<InMemoryPublisherOptions['decide']>;
  private closed = false;

  constructor(options: InMemoryPublisherOptions = {}) {
    this.decide = options.decide ?? (() => 'sent');
  }

  async publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    if (this.closed) throw new Error('in-memory publisher is closed');
    const outcomes: PublishOutcome[] = [];
    for (const message of messages) {
      if (signal.aborted) break;
      this.attempts.push(message);
      const decision = await this.decide(message);
      if (decision === 'sent') {
        this.delivered.push(message);
        outcomes.push({ id: message.id, status: 'sent' });
      } else if ('retryable' in decision) {
        outcomes.push({ id: message.id, status: 'retryable', error: decision.retryable });
      } else {
        outcomes.push({ id: message.id, status: 'permanent', error: decision.permanent });
      }
    }
    return outcomes;
  }

  /** How many times each event id was delivered. */
  deliveryCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const message of this.delivered) counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
    return counts;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
