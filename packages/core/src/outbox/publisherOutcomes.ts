import type { PublishOutcome } from '../contracts';
import { kindOf } from '../validate/json';
import { describeError } from '../redact/redact';
import { arrayLengthArgument } from '../optionChecks';
import { MAX_BATCH_ITEMS } from '../validate/batchLimit';

const STATUSES: ReadonlySet<string> = new Set(['sent', 'retryable', 'permanent', 'unavailable']);

/**
 * The text of what a publisher gave as an outcome's error, as it gave it: toCompletions redacts
 * and bounds it (redactLine) before it is stored, observed or logged. An error that cannot be
 * read (a throwing `message` getter, a hostile Proxy) is described by describeError's guard: the
 * publisher answered, and the batch must still complete.
 */
export function errorText(error: unknown): string {
  try {
    if (typeof error === 'string') return error;
    if (error === undefined || error === null) return 'publisher gave no error';
    if (error instanceof Error) {
      const message: unknown = error.message;
      return typeof message === 'string' ? message : kindOf(message);
    }
  } catch {
    return describeError(error);
  }
  try {
    return JSON.stringify(error) ?? kindOf(error);
  } catch {
    return describeError(error);
  }
}

export type CheckedOutcome =
  PublishOutcome | { readonly id: string; readonly status: 'invalid'; readonly error: string };

/**
 * A publisher's answer, checked: the Publisher contract is public, so what an application's
 * publisher returns is never trusted. `byId` holds each message's one outcome; an entry that is
 * not an outcome is left out (its message has none: retryable), a status ferry does not know and
 * two different outcomes for one message are `invalid` (retryable, never sent). `problem` says
 * why there are none at all: the answer is not an array, its length is no array length or above
 * MAX_BATCH_ITEMS (10,000, more than any batch: read once, before any entry, with
 * arrayLengthArgument as emitMany's events are; an array of length 2^32-1 was iterated whole in
 * one synchronous turn, review 88), or an entry could not be read (a Proxy, a throwing getter:
 * it escaped, and failed the cycle, its rows left to their lease).
 */
export function checkOutcomes(answer: unknown): {
  byId: Map<string, CheckedOutcome>;
  problem: string | null;
} {
  if (!Array.isArray(answer)) {
    return { byId: new Map(), problem: `publisher returned ${kindOf(answer)}, not an array of outcomes` };
  }
  let length: number;
  try {
    length = arrayLengthArgument('outcomes', answer as unknown[], MAX_BATCH_ITEMS, 'outcomes');
  } catch (error) {
    return { byId: new Map(), problem: `publisher returned an answer refused: ${errorText(error)}` };
  }
  try {
    return { byId: readOutcomes(answer as unknown[], length), problem: null };
  } catch (error) {
    return { byId: new Map(), problem: `publisher's outcomes could not be read: ${errorText(error)}` };
  }
}

/** The first `length` entries of `answer`, by index (holes too, left out), as checkOutcomes says. */
function readOutcomes(answer: readonly unknown[], length: number): Map<string, CheckedOutcome> {
  const byId = new Map<string, CheckedOutcome>();
  for (let index = 0; index < length; index += 1) {
    const entry = answer[index];
    if (entry === null || typeof entry !== 'object') continue;
    const { id, status, error } = entry as { id?: unknown; status?: unknown; error?: unknown };
    if (typeof id !== 'string') continue;
    const outcome: CheckedOutcome =
      typeof status === 'string' && STATUSES.has(status)
        ? ({ id, status, ...(status === 'sent' ? {} : { error: errorText(error) }) } as PublishOutcome)
        : {
            id,
            status: 'invalid',
            error: `publisher reported no outcome (status ${JSON.stringify(status)} is not one)`,
          };
    const earlier = byId.get(id);
    if (earlier !== undefined && earlier.status !== outcome.status) {
      const error = `publisher reported conflicting outcomes (${earlier.status}, ${outcome.status})`;
      byId.set(id, { id, status: 'invalid', error });
    } else if (earlier === undefined) byId.set(id, outcome);
  }
  return byId;
}
