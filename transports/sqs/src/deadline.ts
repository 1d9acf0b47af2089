import { deadlineSignal, onAbort } from '@ferry/core/transport';

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

/**
 * `work`, or a rejection with `late(signal.reason)` as soon as `signal` aborts first: the wait
 * ends at the deadline also where the SDK does not look at the signal (while it waits for
 * credentials). `work` is abandoned then, its outcome ignored.
 */
export function untilDeadline<T>(
  work: Promise<T>,
  signal: AbortSignal,
  late: (reason: unknown) => unknown,
): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(late(signal.reason));
  }
  return new Promise<T>((resolve, reject) => {
    const stop = onAbort(signal, () => reject(late(signal.reason)));
    work.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}
