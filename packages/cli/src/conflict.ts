import {
  FerryError,
  InboxStateConflictError,
  REPLAY_PAYLOAD_PURGED,
  type OutboxAdmin,
  type OutboxStatus,
} from '@ferry/core';
import type { ActionResult } from './output';

/**
 * Why a change was refused, as the operator reads it in text and under --json alike (an
 * ActionResult's `detail`, a refused replay's message): what the command expected of the
 * record and what it found.
 */

function state(status: string, version?: number | null): string {
  return version === undefined || version === null ? status : `${status} at version ${version}`;
}

/**
 * `expected DEAD at version 3, found COMPLETED at version 4`; core's reason when the receipt was
 * as expected and still refused (a replay's message id taken), and a purged payload's whatever
 * the version: no version of it can be replayed (review 134: the purge moved the version on, and
 * "found COMPLETED at version 3" sent the operator to act on a version that could not succeed).
 */
export function inboxConflictDetail(
  error: InboxStateConflictError,
  expected: { readonly status: string; readonly version: number },
): string {
  const { actualStatus, actualVersion } = error;
  const asExpected = actualStatus === expected.status && actualVersion === expected.version;
  const purged = error.details.reason === REPLAY_PAYLOAD_PURGED;
  if (actualStatus === null || asExpected || purged) return String(error.details.reason ?? error.message);
  return `expected ${state(expected.status, expected.version)}, found ${state(actualStatus, actualVersion)}`;
}

/**
 * A refused replay (thrown, not a result) with inboxConflictDetail as its message, the same
 * details and code (so the same hint); any other failure as it is.
 */
export function explainedReplayFailure(error: unknown, expectedVersion: number): unknown {
  if (!(error instanceof InboxStateConflictError)) return error;
  const detail = inboxConflictDetail(error, { status: 'COMPLETED', version: expectedVersion });
  return new FerryError('FERRY_STATE_CONFLICT', `inbox record ${error.id}: ${detail}`, {
    cause: error,
    details: error.details,
  });
}

/**
 * Records outbox `results` (a change that committed) with each conflict's detail, `expected FAILED,
 * found PENDING`: core answers a conflict without the status, so it is read after the refusal
 * (the status now). That read never hides an outcome: when it fails, every result is recorded
 * still, the conflicts without the status (`expected FAILED; the status now could not be
 * read`, no further read tried), and then the read's failure is thrown, so the command answers
 * it as a failure part-way (FailedPartway: what was applied, then the error).
 */
export async function recordOutboxResults(
  admin: OutboxAdmin,
  results: readonly ActionResult[],
  expected: OutboxStatus,
  record: (result: ActionResult) => void,
): Promise<void> {
  let unread: { readonly error: unknown } | undefined;
  for (const result of results) {
    if (result.outcome !== 'conflict') {
      record(result);
      continue;
    }
    const now = unread === undefined ? await statusNow(admin, result.id) : unread;
    if ('error' in now) unread = now;
    const found = 'error' in now ? '; the status now could not be read' : `, found ${now.status}`;
    record({ ...result, detail: `expected ${expected}${found}` });
  }
  if (unread !== undefined) throw unread.error;
}

/** The event's status now, `no event (deleted since)`, or the read's failure. */
async function statusNow(
  admin: OutboxAdmin,
  id: string,
): Promise<{ readonly status: string } | { readonly error: unknown }> {
  try {
    const found = await admin.get(id);
    return { status: found === null ? 'no event (deleted since)' : found.status };
  } catch (error) {
    return { error };
  }
}
