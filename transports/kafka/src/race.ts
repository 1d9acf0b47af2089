import { FerryError } from '@ferry/core';
import { abortableDelay, onAbort } from '@ferry/core/transport';
import { describeError } from './errors';

/**
 * When a publish must be done by (performance.now() ms: a deadline is a length of time, which a
 * step of the wall clock must not move), and the budget it was set from (`ms`, named in the error
 * of whatever misses it). The waits of one publish (a topic check, earlier sends, its own send)
 * share one, so together they last at most `ms`.
 */
export interface Deadline {
  readonly at: number;
  readonly ms: number;
  /** The publish call's deadline, when it comes before `ms` does (deadlineWithin): what ends the wait. */
  readonly cutBy?: Deadline;
}

/** A deadline `ms` from now. */
export function deadlineIn(ms: number): Deadline {
  return { at: performance.now() + ms, ms };
}

/**
 * A deadline `ms` from now, but never past `whole` (a publish call's one deadline): `ms` stays the
 * budget it was set from, so a wait `whole` cut short is told by `at` (race.ts hadMost's share).
 */
export function deadlineWithin(ms: number, whole: Deadline): Deadline {
  const own = performance.now() + ms;
  return whole.at < own ? { at: whole.at, ms, cutBy: whole } : { at: own, ms };
}

/**
 * What ends a wait on `deadline`, for its error text: `<ms> ms`, or the publish call's deadline
 * (answerWithinMs) that cut it short, never a budget the wait could not reach (review 97).
 */
export function deadlineText(deadline: Deadline): string {
  const { cutBy } = deadline;
  return cutBy === undefined
    ? `${deadline.ms} ms`
    : `the publish's deadline (answerWithinMs, ${cutBy.ms} ms)`;
}

/** True once `deadline` has come: nothing more is started for it. */
export function passed(deadline: Deadline): boolean {
  return performance.now() >= deadline.at;
}

/** The rejection of raceAbort when its deadline came (DeadlineMissed.deadline is that deadline). */
class DeadlineMissed extends Error {
  constructor(
    what: string,
    readonly deadline: Deadline,
  ) {
    super(`${what} not confirmed within ${deadlineText(deadline)}`);
  }
}

/**
 * True when `error` is raceAbort's rejection for `deadline`, or the deadline has passed. Node may
 * run the deadline's timer a millisecond before performance.now() reaches `deadline.at`, so passed()
 * alone could read false right after the deadline rejected a wait.
 */
export function missedDeadline(error: unknown, deadline: Deadline): boolean {
  return (error instanceof DeadlineMissed && error.deadline === deadline) || passed(deadline);
}

/**
 * Settles with `work`, or rejects as soon as a signal aborts (`<what> abandoned: <reason>`) or
 * `deadline` passes (`<what> not confirmed within <ms> ms`). `work` goes on unobserved, so
 * whoever started it must make sure it is undone when it finishes late.
 */
export function raceAbort(
  work: Promise<unknown>,
  signals: readonly AbortSignal[],
  what: string,
  deadline?: Deadline,
): Promise<void> {
  work.catch(() => undefined);
  return new Promise<void>((resolve, reject) => {
    const cleanups: (() => void)[] = [];
    const settle = (fn: () => void) => {
      for (const cleanup of cleanups) cleanup();
      fn();
    };
    if (deadline !== undefined) {
      const timer = setTimeout(
        () => settle(() => reject(new DeadlineMissed(what, deadline))),
        Math.max(0, deadline.at - performance.now()),
      );
      cleanups.push(() => clearTimeout(timer));
    }
    for (const signal of signals) {
      const abandon = () => settle(() => reject(abandonedError(what, signal)));
      if (signal.aborted) {
        abandon();
        return;
      }
      // Through onAbort: a publisher's own signals hold one listener however many sends race
      // them (a listener each passed Node's limit at 11 sends at once: review 156).
      cleanups.push(onAbort(signal, abandon));
    }
    work.then(
      () => settle(resolve),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/**
 * The longest a client may wait between its own retries (kafkajs's retry timers) for an owner
 * whose close() is bounded by `closeTimeoutMs`: a quarter of it. Such a timer can be neither
 * cancelled nor seen, only waited out; with it this short, close() waits out the one pending,
 * within its bound (boundedClose), and once close() resolved no retry of the client fires
 * (a retry pending at close() of a publisher fired after it, review 145).
 */
export function clientRetryCeilingMs(closeTimeoutMs: number): number {
  return Math.max(1, Math.floor(closeTimeoutMs / 4));
}

/**
 * A close() bounded by `ms` (closeTimeoutMs): runs `work` with a signal that aborts once the bound
 * less a client retry's ceiling (clientRetryCeilingMs) passed, then `pastBound` ends what is left
 * (destroys the clients' sockets) and `work` is waited for the rest of `ms`, at least a retry's
 * ceiling from the destroy: a retry of the client pending then, or set off by the destroy,
 * fires within it, finds the client ended and gives up, before close() resolves. `work` goes on unobserved past that, so it checks the signal: nothing of it is
 * logged or started once close() resolved (review 132: a LeaveGroup failing after the bound
 * logged "disconnect failed" after close() resolved, and the consumer's dead-letter producer was
 * disconnected after it).
 */
export async function boundedClose(
  what: string,
  ms: number,
  work: (pastBound: AbortSignal) => Promise<void>,
  pastBound: () => Promise<void>,
): Promise<void> {
  const bound = new AbortController();
  const whole = deadlineIn(ms);
  const working = work(bound.signal);
  try {
    await raceAbort(working, [], what, deadlineIn(ms - clientRetryCeilingMs(ms)));
  } catch {
    bound.abort();
    await pastBound();
    // A request the destroy failed (a fetch long-poll) may have set a client retry only now, up to
    // a ceiling away: waited for that long from here, not only to the end of `ms`, which the
    // destroy itself ate into (review 150: the retry fired just after close() resolved).
    const reserve = deadlineIn(clientRetryCeilingMs(ms) + 1);
    await raceAbort(working, [], what, reserve.at > whole.at ? reserve : whole).catch(() => undefined);
    // And that long even when `work` ended sooner: a client retry pending at the destroy that
    // nothing of `work` waits for (@platformatic/kafka's group and fetch retries, failed by the
    // destroy) fires within it, before close() resolves (review 150, retries nested in retries).
    await abortableDelay(Math.max(0, reserve.at - performance.now()), new AbortController().signal);
  }
}

/**
 * Throws what raceAbort would reject with when one of `signals` already aborted: for callers that
 * must not start `what` at all then (work started and raced would go on unobserved).
 */
export function throwIfAborted(signals: readonly AbortSignal[], what: string): void {
  const aborted = signals.find((signal) => signal.aborted);
  if (aborted) throw abandonedError(what, aborted);
}

/**
 * A wait given up because a signal aborted (the relay's, the publisher's close()): retriable
 * whatever the reason, a closed publisher's FERRY_CLOSED included. Nothing was sent and nothing
 * is the message's fault; the reason's own `retriable` (FERRY_CLOSED's is false) made a publish
 * waiting for the producer's connect when the publisher closed `permanent`, failing the event
 * for good (review 98). The reason stays its cause: the publisher's close() marks its reasons
 * unavailable (KafkaPublisher.close), so a wait it ended is `unavailable`, the relay's `retryable`.
 */
function abandonedError(what: string, signal: AbortSignal): Error {
  return new FerryError('FERRY_TRANSPORT_ERROR', `${what} abandoned: ${describeError(signal.reason)}`, {
    cause: signal.reason,
    retriable: true,
  });
}
