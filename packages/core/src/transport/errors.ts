import { FerryError } from '../errors';

/**
 * Why a transport dead-lettered a message; travels in the `x-ferry-reject-reason` header
 * (or attribute). Every transport uses these; some add reasons of their own.
 */
export const TRANSPORT_REJECT_REASONS = {
  missingIdentity: 'missing_identity',
  unparseableBody: 'unparseable_body',
  payloadTooLarge: 'payload_too_large',
  inboxInvalid: 'inbox_invalid',
  fingerprintConflict: 'fingerprint_conflict',
} as const;

/** A broker failure as callers see it: retriable `FERRY_TRANSPORT_ERROR` with the cause attached. */
export function transportError(
  message: string,
  cause?: unknown,
  describe: (error: unknown) => string = describeTransportError,
): FerryError {
  return new FerryError('FERRY_TRANSPORT_ERROR', `${message}: ${describe(cause)}`, { cause });
}

export function closedError(what: string): FerryError {
  return new FerryError('FERRY_CLOSED', `${what} is closed`);
}

/** An error's message (or its string form) for logs and error messages. */
export function describeTransportError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error === undefined) return 'unknown error';
  return String(error);
}
