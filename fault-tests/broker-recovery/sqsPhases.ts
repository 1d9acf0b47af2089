/**
 * Support for sqs-restart: a publisher wrapper that records, for every `sent` outcome, which
 * incarnation of the SQS endpoint can have accepted it. The phase is taken when the publish call
 * STARTS, because the endpoint that answers a call is the one that was listening when the call went
 * out (the connection is created with `maxAttempts: 1`, so the SDK never re-sends a request later):
 *
 * - `first`: started before the killed process was confirmed gone. Only the first incarnation
 *   can have accepted these (the second one has no queue until `recreating`), so they may have died
 *   with ElasticMQ's memory.
 * - `down`: started after the process was gone and before the queue was re-created. No endpoint
 *   holds the queue, so a `sent` outcome here would be a lie; the scenario asserts there is none.
 * - `second`: started once the queue re-creation was issued; accepted by the second incarnation.
 */
import type { OutboxMessage, PublishOutcome, Publisher } from '@ferry/core';

export type EndpointPhase = 'first' | 'down' | 'second';

export class PhasedPublisher implements Publisher {
  phase: EndpointPhase = 'first';
  readonly sent: Record<EndpointPhase, Set<string>> = {
    first: new Set(),
    down: new Set(),
    second: new Set(),
  };
  /** Outcomes that were not `sent` (retryable / permanent), per phase. */
  readonly notSent: Record<EndpointPhase, number> = { first: 0, down: 0, second: 0 };

  constructor(private readonly inner: Publisher) {}

  async publish(messages: readonly OutboxMessage[], signal: AbortSignal): Promise<readonly PublishOutcome[]> {
    const phase = this.phase;
    const outcomes = await this.inner.publish(messages, signal);
    for (const outcome of outcomes) {
      if (outcome.status === 'sent') this.sent[phase].add(outcome.id);
      else this.notSent[phase] += 1;
    }
    return outcomes;
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
