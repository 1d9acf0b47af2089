import type { OutboxMessage, PublishOutcome } from '../contracts';
import type { Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import type { TransportObserver, TransportPublisherEvent } from './events';

/** Who reports a publisher's calls, and to whom. */
export interface PublishReport {
  readonly transport: string;
  readonly observer: TransportObserver<TransportPublisherEvent> | undefined;
  /** Where a throwing observer is logged. */
  readonly logger?: Logger | undefined;
}

/**
 * Runs one publish() call and tells the observer how it ended, per destination: one
 * `published` for the messages the broker confirmed, one `publish-failed` per other outcome
 * (retryable, permanent, unavailable) with the first error among them. `destinationOf` names
 * where a message went: the publisher's destinationName (the exchange, topic or queue, never a
 * routing key; '' for null, no route). Every ferry publisher reports through here, so the events
 * are the same for every transport.
 */
export async function observePublish(
  report: PublishReport,
  messages: readonly OutboxMessage[],
  destinationOf: (message: OutboxMessage) => string | null,
  publish: () => Promise<readonly PublishOutcome[]>,
): Promise<readonly PublishOutcome[]> {
  if (!report.observer) return publish();
  const startedAt = performance.now();
  const outcomes = await publish();
  const durationMs = Math.round(performance.now() - startedAt);
  const groups = new Map<string, { destination: string; outcome: PublishOutcome; count: number }>();
  const byId = new Map(messages.map((message) => [message.id, message]));
  for (const outcome of outcomes) {
    const message = byId.get(outcome.id);
    const destination = (message ? destinationOf(message) : null) ?? '';
    const key = JSON.stringify([destination, outcome.status]);
    const group = groups.get(key);
    if (group) group.count += 1;
    else groups.set(key, { destination, outcome, count: 1 });
  }
  const { transport } = report;
  for (const { destination, outcome, count } of groups.values()) {
    const event: TransportPublisherEvent =
      outcome.status === 'sent'
        ? { type: 'published', transport, destination, count, durationMs }
        : {
            type: 'publish-failed',
            transport,
            destination,
            count,
            outcome: outcome.status,
            error: outcome.error,
          };
    safeEmit(report.observer, event, report.logger);
  }
  return outcomes;
}
