import type { OutboxMessage, Publisher, PublishOutcome } from '@ferry/core';
import {
  functionOption,
  knownKeysOption,
  observePublish,
  type OptionKeys,
  type PublishReport,
  type TransportObserver,
  type TransportPublisherEvent,
} from '@ferry/core/transport';

/** What the in-memory broker does with one message. */
export type PublishDecision =
  | 'sent'
  | { readonly retryable: string }
  | { readonly permanent: string }
  /** The broker is unreachable (see PublishOutcome `unavailable`). */
  | { readonly unavailable: string };

export interface InMemoryPublisherOptions {
  /** Decides each message's outcome; default: every message is sent. May be async (e.g. to hang). */
  decide?: (message: OutboxMessage) => PublishDecision | Promise<PublishDecision>;
  /**
   * Told how each publish call ended (through safeEmit, `transport: 'memory'`, `destination`:
   * the message's destination), as every ferry publisher does: `published`, `publish-failed`.
   */
  observer?: TransportObserver<TransportPublisherEvent>;
}

/**
 * A broker in memory for tests of applications and of the relay. `attempts` records every
 * message handed to it; `delivered` only those it reported sent (what a consumer would get).
 * Aborting the signal before a decision makes the remaining messages unreported (retryable).
 * After `close()` (safe twice) every message is reported retryable, as ferry's transports do.
 */
const KEYS = { decide: true, observer: true } as const satisfies OptionKeys<InMemoryPublisherOptions>;

export class InMemoryPublisher implements Publisher {
  readonly attempts: OutboxMessage[] = [];
  readonly delivered: OutboxMessage[] = [];
  private readonly decide: NonNullable<InMemoryPublisherOptions['decide']>;
  private readonly report: PublishReport;
  private closed = false;

  constructor(options: InMemoryPublisherOptions = {}) {
    knownKeysOption('', options, KEYS);
    this.decide = functionOption('decide', options.decide) ?? (() => 'sent');
    this.report = { transport: 'memory', observer: functionOption('observer', options.observer) };
  }

  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    return observePublish(
      this.report,
      messages,
      (message) => message.destination ?? '',
      () => this.publishNow(messages, signal),
    );
  }

  private async publishNow(
    messages: readonly OutboxMessage[],
    signal: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    if (this.closed)
      return messages.map((m) => ({ id: m.id, status: 'retryable', error: 'publisher is closed' }));
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
      } else if ('unavailable' in decision) {
        outcomes.push({ id: message.id, status: 'unavailable', error: decision.unavailable });
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
