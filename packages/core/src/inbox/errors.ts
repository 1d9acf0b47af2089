import type { InboxAdmissionResult } from '../contracts';
import { FerryError, type FerryErrorOptions } from '../errors';

/** Thrown by a handler: the receipt becomes DEAD at once, without spending more attempts. */
export class InboxPermanentError extends FerryError {
  constructor(message: string, options: FerryErrorOptions = {}) {
    super('FERRY_PERMANENT_FAILURE', message, options);
  }
}

/**
 * A global (tenant-less) receipt reached a tenancy context that does not allow it
 * (createInboxTenancyContext without `global: 'shared'`): DEAD at once, handler not run.
 */
export class InboxGlobalScopeRejectedError extends InboxPermanentError {
  override readonly code = 'FERRY_GLOBAL_SCOPE_REJECTED';
  constructor(receiptId: string) {
    super(
      `global receipt ${receiptId} rejected by the tenancy context; pass global: 'shared' to createInboxTenancyContext to run it with an empty tenant setting`,
      { details: { receiptId } },
    );
  }
}

/** Thrown by a handler (or its `parse`) for a payload it cannot process: DEAD at once. */
export class InboxInvalidPayloadError extends FerryError {
  constructor(message: string, options: FerryErrorOptions = {}) {
    super('FERRY_INVALID_PAYLOAD', message, options);
  }
}

/** Thrown by a handler (or its `parse`) for a schema version it does not support: DEAD at once. */
export class InboxUnsupportedSchemaError extends FerryError {
  constructor(message: string, options: FerryErrorOptions = {}) {
    super('FERRY_UNSUPPORTED_SCHEMA', message, options);
  }
}

/**
 * The `reason` (details.reason) of the InboxStateConflictError a new replay throws when its source's
 * payload was purged: no later state of the receipt brings it back, unlike the other conflicts.
 */
export const REPLAY_PAYLOAD_PURGED = 'the source payload was purged; a new replay needs it';

/** An admin mutation found the record in another state or version than expected. */
export class InboxStateConflictError extends FerryError {
  readonly id: string;
  readonly actualStatus: string | null;
  readonly actualVersion: number | null;
  constructor(id: string, reason: string, actual: { status: string; rowVersion: number } | null) {
    super('FERRY_STATE_CONFLICT', `inbox record ${id}: ${reason}`, {
      details: { id, reason, status: actual?.status ?? null, rowVersion: actual?.rowVersion ?? null },
    });
    this.id = id;
    this.actualStatus = actual?.status ?? null;
    this.actualVersion = actual?.rowVersion ?? null;
  }
}

/** A replay request id was reused with different arguments. */
export class InboxReplayConflictError extends FerryError {
  readonly requestId: string;
  readonly existingReplayId: string;
  constructor(requestId: string, existingReplayId: string, differing: readonly string[]) {
    super(
      'FERRY_REPLAY_CONFLICT',
      `replay request ${requestId} was already used with other arguments (${differing.join(', ')})`,
      { details: { requestId, existingReplayId, differing } },
    );
    this.requestId = requestId;
    this.existingReplayId = existingReplayId;
  }
}

/** The same (scope, consumer, message id) was offered with a different payload fingerprint. */
export class InboxFingerprintConflictError extends FerryError {
  readonly existingId: string;
  constructor(existingId: string) {
    super(
      'FERRY_FINGERPRINT_CONFLICT',
      `message id reused with a different payload (receipt ${existingId})`,
      {
        details: { existingId },
      },
    );
    this.existingId = existingId;
  }
}

/**
 * The approximate admission limit (maxPendingMessages) refused the new items of a batch.
 * Retriable. `results` has one entry per input, in order: `refused` for each new item (not
 * stored), and the ordinary result of every other item (duplicates are still answered).
 */
export class InboxAdmissionRejectedError extends FerryError {
  readonly results: readonly InboxAdmissionResult[];
  constructor(maxPendingMessages: number, results: readonly InboxAdmissionResult[]) {
    const refused = results.filter((r) => r.kind === 'refused').length;
    super(
      'FERRY_ADMISSION_REJECTED',
      `inbox backlog reached maxPendingMessages (${maxPendingMessages}); ${refused} new message(s) refused`,
      { details: { maxPendingMessages, refused } },
    );
    this.results = results;
  }
}

/** No record with that id exists in the selected scope. */
export class InboxNotFoundError extends FerryError {
  constructor(id: string) {
    super('FERRY_NOT_FOUND', `inbox record ${id} not found in this scope`, { details: { id } });
  }
}

/** A handler-context wrapper skipped, repeated, did not await, or swallowed `next()`. */
export class InboxWrapperMisuseError extends FerryError {
  constructor(reason: string, cause?: unknown) {
    super('FERRY_WRAPPER_MISUSE', `handlerContext wrapper misuse: ${reason}`, {
      cause,
      details: { reason },
    });
  }
}

/** The claim was lost (lease expired or taken over); the transaction is rolled back. */
export class InboxLeaseLostError extends FerryError {
  constructor(id: string) {
    super('FERRY_LEASE_LOST', `inbox receipt ${id}: claim lost before completion`, { details: { id } });
  }
}

/**
 * The handler ended its own transaction (COMMIT or ROLLBACK on `context.tx`): ferry does not
 * complete the receipt outside it, so it is retried. What the handler committed stays committed.
 */
export class InboxTransactionEndedError extends FerryError {
  constructor(id: string) {
    super(
      'FERRY_TRANSACTION_MISUSE',
      `inbox receipt ${id}: the handler ended its transaction (COMMIT or ROLLBACK on context.tx); the receipt was not completed`,
      { details: { id } },
    );
  }
}

/** Failures that make a receipt DEAD without spending the remaining attempts. */
export function isTerminalHandlerError(error: unknown): boolean {
  return (
    error instanceof InboxPermanentError ||
    error instanceof InboxInvalidPayloadError ||
    error instanceof InboxUnsupportedSchemaError
  );
}
