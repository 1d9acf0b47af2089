import type { Publisher } from '../contracts';
import { MAX_TIMER_MS } from '../optionChecks';

/** Added to the publisher's answerWithinMs: its deadlines start a little after publish() is called. */
export const ANSWER_MARGIN_MS = 1_000;

/**
 * How long the relay waits for a publish() before it gives up on it itself (publishBatch): one
 * lease duration, or the publisher's own longest answer (Publisher.answerWithinMs) and a margin
 * when that is longer. The lease is renewed meanwhile. Waiting one lease only, a lease shorter than
 * the publisher's confirm deadline made the relay judge a broker gone silent before the publisher
 * could (`retryable`, an attempt spent on every event it met, FAILED in the end; review 93).
 * Read once per publish and never failing: a value that throws, or is no positive finite number,
 * counts as none.
 */
export function publishWaitMs(publisher: Publisher, leaseMs: number): number {
  let declared: unknown;
  try {
    declared = publisher.answerWithinMs;
  } catch {
    declared = undefined;
  }
  if (typeof declared !== 'number' || !Number.isFinite(declared) || declared <= 0) return leaseMs;
  return Math.min(MAX_TIMER_MS, Math.max(leaseMs, Math.ceil(declared) + ANSWER_MARGIN_MS));
}
