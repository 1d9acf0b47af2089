import type { OutboxMessage, Publisher, PublishOutcome } from '@ferry/core';
import {
  closedOutcome,
  describeCause,
  functionOption,
  knownKeysOption,
  MAX_TIMER_MS,
  observePublish,
  onAbort,
  PublishCalls,
  received,
  type OptionKeys,
  type PublishReport,
  type TransportObserver,
  type TransportPublisherEvent,
} from '@ferry/core/transport';
import { MEMORY_SYSTEM } from './memorySystem';

/** What the in-memory broker does with one message. */
export type PublishDecision =
  | 'sent'
  | { readonly retryable: string }
  | { readonly permanent: string }
  /** The broker is unreachable (see PublishOutcome `unavailable`). */
  | { readonly unavailable: string };

export interface InMemoryPublisherOptions {
  /**
   * Decides each message's outcome; default: every message is sent. May be async (e.g. to hang):
   * a decision still pending when the call's signal aborts or close() is called is not waited for.
   * One that throws, rejects or answers no PublishDecision costs its message alone (`retryable`).
   */
  decide?: (message: OutboxMessage) => PublishDecision | Promise<PublishDecision>;
  /**
   * Told how each publish call ended (through safeEmit, `transport: 'memory'`, `destination`:
   * the message's destination), as every ferry publisher does: `published`, `publish-failed`.
   */
  observer?: TransportObserver<TransportPublisherEvent>;
}

const KEYS = { decide: true, observer: true } as const satisfies OptionKeys<InMemoryPublisherOptions>;

/** A decision not waited for: the call's signal aborted, or close() was called. */
const ABANDONED = Symbol('abandoned');

/**
 * A broker in memory for tests of applications and of the relay, with the publish contract of
 * ferry's transports. `attempts` records every message it asked `decide` about; `delivered` only
 * those it reported sent (what a consumer would get); both are copies, in order. Once a message of
 * an ordering key is not sent, the later messages of that key in the same call are not decided
 * (reported `unavailable` after an `unavailable` one, else `retryable`). Aborting the signal
 * leaves the remaining messages unreported (retryable). `close()` (safe twice) ends the calls in
 * flight and resolves once they did: nothing is recorded sent after it, and every message not
 * decided by then, in those calls or later ones, is reported `unavailable` ("publisher is closed":
 * the broker out of the relay's reach, no attempt spent), as ferry's transports do; a call that
 * starts once close() was called decides nothing and tells the observer nothing. Names `system: 'memory'`.
 */
export class InMemoryPublisher implements Publisher {
  /** OpenTelemetry's `messaging.system` of the relay's publish spans (the consumer names it too). */
  readonly system = MEMORY_SYSTEM;
  private readonly attempted: OutboxMessage[] = [];
  private readonly sent: OutboxMessage[] = [];
  private readonly decide: NonNullable<InMemoryPublisherOptions['decide']>;
  private readonly report: PublishReport;
  private readonly stopping = new AbortController();
  private readonly calls = new PublishCalls();
  private closed = false;

  constructor(options: InMemoryPublisherOptions = {}) {
    options = knownKeysOption('', options, KEYS);
    this.decide = functionOption('decide', options.decide) ?? (() => 'sent');
    this.report = {
      transport: 'memory',
      observer: functionOption('observer', options.observer),
      calls: this.calls,
    };
  }

  /** Every message `decide` was asked about, in order (a copy). */
  get attempts(): OutboxMessage[] {
    return [...this.attempted];
  }

  /** Every message reported sent, in order (a copy). */
  get delivered(): OutboxMessage[] {
    return [...this.sent];
  }

  /** The event's destination (null without one): the relay's span name and the observer's `destination`. */
  destinationName(message: OutboxMessage): string | null {
    return message.destination;
  }

  publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    return observePublish(
      this.report,
      messages,
      (message) => this.destinationName(message),
      () => this.publishNow(messages, signal),
    );
  }

  private async publishNow(
    messages: readonly OutboxMessage[],
    signal: AbortSignal,
  ): Promise<readonly PublishOutcome[]> {
    const outcomes: PublishOutcome[] = [];
    // The status of each key's first message not sent in this call: its later messages share it.
    const failedKeys = new Map<string, 'retryable' | 'unavailable'>();
    for (const message of messages) {
      if (this.closed) {
        outcomes.push(closedOutcome(message.id));
        continue;
      }
      if (signal.aborted) break;
      const key = message.orderingKey;
      const earlier = key === null ? undefined : failedKeys.get(key);
      if (earlier !== undefined) {
        const error = `an earlier message of ordering key ${key} was not sent`;
        outcomes.push({ id: message.id, status: earlier, error });
        continue;
      }
      this.attempted.push(message);
      const decision = await this.decideWithin(message, signal);
      if (decision === ABANDONED) {
        if (this.closed) outcomes.push(closedOutcome(message.id));
        continue;
      }
      const outcome = outcomeOf(message.id, decision);
      if (outcome.status === 'sent') this.sent.push(message);
      else if (key !== null)
        failedKeys.set(key, outcome.status === 'unavailable' ? 'unavailable' : 'retryable');
      outcomes.push(outcome);
    }
    return outcomes;
  }

  /**
   * `decide(message)`, not waited for past the call's signal or close(); a throw or a rejection is
   * the message's `retryable` outcome, as a real publisher's failure of one message is.
   */
  private decideWithin(message: OutboxMessage, signal: AbortSignal): Promise<unknown> {
    let decision: unknown;
    try {
      decision = this.decide(message);
    } catch (error) {
      return Promise.resolve({ retryable: `decide threw: ${describeCause(error)}` });
    }
    if (!isThenable(decision)) return Promise.resolve(decision);
    return new Promise((resolve) => {
      const finish = (answer: unknown) => {
        stops.forEach((stop) => stop());
        resolve(answer);
      };
      const stops = [signal, this.stopping.signal].map((stop) => onAbort(stop, () => finish(ABANDONED)));
      // Aborted by decide itself, before the listeners were there.
      if (signal.aborted || this.stopping.signal.aborted) finish(ABANDONED);
      Promise.resolve(decision).then(finish, (error: unknown) =>
        finish({ retryable: `decide rejected: ${describeCause(error)}` }),
      );
    });
  }

  /** How many times each event id was delivered. */
  deliveryCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const message of this.sent) counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
    return counts;
  }

  /** Ends the calls in flight (their pending decisions are not waited for) and resolves once they did. */
  async close(): Promise<void> {
    this.closed = true;
    // A publish from now on is answered `unavailable` and reports nothing (observePublish).
    this.calls.close();
    this.stopping.abort();
    // Unbounded in effect, as before: the abort has ended every call's wait for a decision.
    await this.calls.settled(MAX_TIMER_MS);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  try {
    return typeof (value as { then?: unknown } | null)?.then === 'function';
  } catch {
    return false;
  }
}

/** The outcome of one decision; anything but a PublishDecision is the message's `retryable`. */
function outcomeOf(id: string, decision: unknown): PublishOutcome {
  try {
    if (decision === 'sent') return { id, status: 'sent' };
    if (typeof decision === 'object' && decision !== null) {
      const answer = decision as Record<string, unknown>;
      for (const status of ['retryable', 'permanent', 'unavailable'] as const) {
        const error = answer[status];
        if (typeof error === 'string') return { id, status, error };
      }
    }
  } catch {
    // A decision that cannot be read (a revoked Proxy): shown as received below.
  }
  return { id, status: 'retryable', error: `decide answered no PublishDecision: ${received(decision)}` };
}
