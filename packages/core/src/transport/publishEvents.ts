import type { OutboxMessage, PublishOutcome } from '../contracts';
import type { Logger } from '../observe/logger';
import { safeEmit } from '../observe/safeEmit';
import { checkOutcomes } from '../outbox/publisherOutcomes';
import { settlesWithin } from '../outbox/settle';
import { describeError, MAX_OBSERVED_ERROR_CHARS, redactLine } from '../redact/redact';
import { closedOutcome, PUBLISHER_CLOSED } from './closedOutcome';
import type { TransportObserver, TransportPublisherEvent } from './events';

/** Who reports a publisher's calls, and to whom. */
export interface PublishReport {
  readonly transport: string;
  readonly observer: TransportObserver<TransportPublisherEvent> | undefined;
  /** Where a throwing observer is logged. */
  readonly logger?: Logger | undefined;
  /**
   * The publisher's calls in flight, which its close() waits for, and whether close() was called
   * (PublishCalls).
   */
  readonly calls?: PublishCalls;
}

/**
 * Runs one publish() call and tells the observer how it ended, per destination, as the relay
 * makes it of each message: one `published` for the messages the broker confirmed, one
 * `publish-failed` per other outcome (retryable, permanent, unavailable) with the first error
 * among them; a message the answer gives no valid outcome for is retryable (checkOutcomes), and
 * a publish() that rejects (or throws) makes every message retryable, `publish failed: <the
 * rejection>`, the rejection then propagated unchanged (review 124: it was reported to nobody).
 * `destinationOf` names where a message went: the publisher's destinationName (the exchange,
 * topic or queue, never a routing key; '' for null, no route, or a throw). Nothing of the
 * observation changes what publish() answered (review 124: a destinationOf that threw made a
 * confirmed batch retryable). Every ferry publisher reports through here, so the events are the
 * same for every transport. A call is counted in `report.calls` until it settled.
 *
 * A call that starts once the publisher's close() was called (`report.calls` closed) is answered
 * here, every message `unavailable` (closedOutcome, the publisher's closed text): publish() does
 * not run, and the observer, the log and the metrics fed from it hear nothing. A relay left
 * running on a closed publisher probes it every cycle: each probe reported `publish-failed` to
 * an observer its owner had shut down, after close() resolved (review 148). A call in flight at
 * close() still reports how close() ended it, before close() resolves.
 */
export function observePublish(
  report: PublishReport,
  messages: readonly OutboxMessage[],
  destinationOf: (message: OutboxMessage) => string | null,
  publish: () => Promise<readonly PublishOutcome[]>,
): Promise<readonly PublishOutcome[]> {
  const closed = report.calls?.closedWith ?? null;
  if (closed !== null) return Promise.resolve(messages.map((message) => closedOutcome(message.id, closed)));
  const call = observed(report, messages, destinationOf, publish);
  return report.calls ? report.calls.track(call) : call;
}

async function observed(
  report: PublishReport,
  messages: readonly OutboxMessage[],
  destinationOf: (message: OutboxMessage) => string | null,
  publish: () => Promise<readonly PublishOutcome[]>,
): Promise<readonly PublishOutcome[]> {
  if (!report.observer) return publish();
  const startedAt = performance.now();
  let outcomes: readonly PublishOutcome[];
  try {
    outcomes = await publish();
  } catch (error) {
    const failure = `publish failed: ${describeError(error, MAX_OBSERVED_ERROR_CHARS)}`;
    safeEmit(() => reportCall(report, messages, destinationOf, [], failure, 0), undefined, report.logger);
    throw error;
  }
  const durationMs = Math.round(performance.now() - startedAt);
  safeEmit(
    () => reportCall(report, messages, destinationOf, outcomes, 'publisher reported no outcome', durationMs),
    undefined,
    report.logger,
  );
  return outcomes;
}

/**
 * The publish() calls of one publisher not settled yet, for its close(): once close() has ended
 * them (its closing signal answers each at once, `retryable`), it waits for them, so every call
 * in flight has answered and told its observer before close() resolves. A call answered after
 * close() resolved reported to an observer (metrics, a log) its owner had already shut down
 * (review 145).
 */
export class PublishCalls {
  private readonly calls = new Set<Promise<unknown>>();
  private closedAnswer: string | null = null;

  /**
   * The publisher's close() was called (its first step): every publish() that starts from now on
   * is answered by observePublish, each message `unavailable` with `error`, and reports nothing.
   * The first call's `error` stays.
   */
  close(error: string = PUBLISHER_CLOSED): void {
    this.closedAnswer ??= error;
  }

  /** The error a call that starts now is answered with (close() was called); null while open. */
  get closedWith(): string | null {
    return this.closedAnswer;
  }

  /** `call`, counted until it settles. */
  track<T>(call: Promise<T>): Promise<T> {
    const settled = call.then(
      () => undefined,
      () => undefined,
    );
    this.calls.add(settled);
    void settled.then(() => this.calls.delete(settled));
    return call;
  }

  /** Resolves once every call counted now has settled (true), or after `ms` (false). */
  settled(ms: number): Promise<boolean> {
    return this.calls.size === 0 ? Promise.resolve(true) : settlesWithin(Promise.all(this.calls), ms);
  }
}

type Status = PublishOutcome['status'];

/** The events of one call: `answer` checked as the relay checks it, `fallback` a message's error without an outcome. */
function reportCall(
  report: PublishReport,
  messages: readonly OutboxMessage[],
  destinationOf: (message: OutboxMessage) => string | null,
  answer: unknown,
  fallback: string,
  durationMs: number,
): void {
  const { byId, problem } = checkOutcomes(answer);
  const groups = new Map<string, { destination: string; status: Status; error: string; count: number }>();
  for (const message of messages) {
    const outcome = byId.get(message.id);
    const status: Status =
      outcome === undefined || outcome.status === 'invalid' ? 'retryable' : outcome.status;
    const destination = destinationIn(destinationOf, message);
    const key = JSON.stringify([destination, status]);
    const group = groups.get(key);
    if (group) group.count += 1;
    else {
      const error = outcome === undefined ? (problem ?? fallback) : 'error' in outcome ? outcome.error : '';
      groups.set(key, { destination, status, error, count: 1 });
    }
  }
  const { transport } = report;
  for (const { destination, status, error, count } of groups.values()) {
    const event: TransportPublisherEvent =
      status === 'sent'
        ? { type: 'published', transport, destination, count, durationMs }
        : {
            type: 'publish-failed',
            transport,
            destination,
            count,
            outcome: status,
            error: redactLine(error, MAX_OBSERVED_ERROR_CHARS),
          };
    safeEmit(report.observer, event, report.logger);
  }
}

/** Where `message` went, as its publisher names it; '' for none, or when naming it throws. */
function destinationIn(
  destinationOf: (message: OutboxMessage) => string | null,
  message: OutboxMessage,
): string {
  try {
    return destinationOf(message) ?? '';
  } catch {
    return '';
  }
}
