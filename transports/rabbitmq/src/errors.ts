import { FerryError } from '@ferry/core';

/**
 * Broker failures are translated here, at the boundary: callers only ever see a
 * FerryError with code `FERRY_TRANSPORT_ERROR` (retriable) or `FERRY_CLOSED`.
 */
export function transportError(message: string, cause?: unknown): FerryError {
  return new FerryError('FERRY_TRANSPORT_ERROR', `${message}: ${describeError(cause)}`, { cause });
}

export function closedError(what: string): FerryError {
  return new FerryError('FERRY_CLOSED', `${what} is closed`);
}

/** Why a delivery was dead-lettered; travels in the `x-ferry-reject-reason` header. */
export const REJECT_REASONS = {
  missingIdentity: 'missing_identity',
  unparseableBody: 'unparseable_body',
  payloadTooLarge: 'payload_too_large',
  unsupportedContentType: 'unsupported_content_type',
  retriesExhausted: 'transport_retries_exhausted',
  inboxInvalid: 'inbox_invalid',
  fingerprintConflict: 'fingerprint_conflict',
} as const;

export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error === undefined) return 'unknown error';
  return String(error);
}
