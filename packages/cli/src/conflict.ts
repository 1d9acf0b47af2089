import { FerryError, InboxStateConflictError, type OutboxAdmin, type OutboxStatus } from '@ferry/core';
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
 * as expected and still refused (a purged payload, a replay's message id taken).
 */
export function inboxConflictDetail(
  error: InboxStateConflictError,
  expected: { readonly status: string; readonly version: number },
): string {
  const { actualStatus, actualVersion } = error;
  const asExpected = actualStatus === expected.status && actualVersion === expected.version;
  if (actualStatus === null || asExpected) return String(error.details.reason ?? error.message);
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
 * Outbox results with each conflict's detail, `expected FAILED, found PENDING`: core answers a
 * conflict without the status, so it is read after the refusal (the status now).
 */
export async function outboxConflictsExplained(
  admin: OutboxAdmin,
  results: readonly ActionResult[],
  expected: OutboxStatus,
): Promise<ActionResult[]> {
  const explained: ActionResult[] = [];
  for (const result of results) {
    if (result.outcome !== 'conflict') {
      explained.push(result);
      continue;
    }
    const found = await admin.get(result.id);
    const now = found === null ? 'no event (deleted since)' : found.status;
    explained.push({ ...result, detail: `expected ${expected}, found ${now}` });
  }
  return explained;
}
