import { deadlineSignal } from '@ferry/core/transport';

/**
 * The abort signal of one SQS request, the one way every request the transport makes gets a
 * deadline: the SDK has none of its own, and an SQS behind a network that drops packets never
 * answers. SQS gets `ms` to answer; `stop` (the consumer's close(), the relay's publish signal)
 * ends the wait sooner. The request then rejects with an AbortError; what the caller does about
 * it is its own: a message not deleted or not moved stays in the queue and comes back.
 */
export function requestDeadline(ms: number, stop?: AbortSignal): AbortSignal {
  return stop ? deadlineSignal(ms, stop) : deadlineSignal(ms);
}
