import type { PublishOutcome } from '../contracts';

/** The error of a message a publisher did not publish because it is closed (or closing). */
export const PUBLISHER_CLOSED = 'publisher is closed';

/**
 * The outcome of a message its publisher did not publish, or did not have confirmed, because the
 * publisher was closed before or during the call: `unavailable`. From the relay's side a closed
 * publisher is a broker it cannot reach, never a verdict on the message: the relay hands the event
 * back without spending an attempt, and a cycle of only such outcomes opens its circuit. Answered
 * `retryable`, a relay left running on a closed publisher (the application closed it first, or
 * both at once in a shutdown hook) spent an attempt per event and cycle and turned its whole
 * backlog FAILED. `error` keeps the publisher's own text ("SQS publisher is closed", "no confirm:
 * RabbitMQ publisher is closed", …).
 *
 * A publish ended by the relay's own signal (its lease lost, its shutdown, its publish deadline)
 * stays `retryable` in every ferry publisher: publishBatch races the publish against that abort,
 * stops waiting at it and never reads what the publisher answers afterwards (the claim is lost,
 * or the relay stores its own deadline's `retryable`). Only close() makes this outcome.
 */
export function closedOutcome(id: string, error: string = PUBLISHER_CLOSED): PublishOutcome {
  return { id, status: 'unavailable', error };
}

/**
 * Whether `error` (of an `unavailable` outcome) is a closed publisher's answer: it ends with
 * PUBLISHER_CLOSED, in any case ("publisher is closed", "SQS publisher is closed", "no confirm:
 * RabbitMQ publisher is closed", "send abandoned: Kafka publisher is closed", "connecting the Kafka
 * producer abandoned: Kafka publisher is closed"), as every ferry publisher answers what its close()
 * kept from the broker, in flight or after (observePublish). A relay whose cycle had only such
 * outcomes says its publisher is closed, not the broker out of reach (review 148); a transport of
 * an application's own that ends its closed answers so is read the same way.
 */
export function isClosedAnswer(error: string | null | undefined): boolean {
  return typeof error === 'string' && error.toLowerCase().endsWith(PUBLISHER_CLOSED);
}
