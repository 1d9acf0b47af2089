import { FerryError, type FerryErrorOptions } from '../errors';

/** Thrown by a handler: the receipt becomes DEAD at once, without spending more attempts. */
export class InboxPermanentError extends FerryError {
  constructor(message: string, options: FerryErrorOptions = {}) {
    super('FERRY_PERMANENT_FAILURE', message, options);
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

/** Failures that make a receipt DEAD without spending the remaining attempts. */
export function isTerminalHandlerError(error: unknown): boolean {
  return (
    error instanceof InboxPermanentError ||
    error instanceof InboxInvalidPayloadError ||
    error instanceof InboxUnsupportedSchemaError
  );
}
