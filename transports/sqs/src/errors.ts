import { isConnectionLevelError, TRANSPORT_REJECT_REASONS } from '@ferry/core/transport';

/**
 * SQS failures are translated here, at the boundary: callers only ever see a FerryError
 * with code `FERRY_TRANSPORT_ERROR` (retriable), `FERRY_PERMANENT_FAILURE` or `FERRY_CLOSED`.
 */
export { transportError, closedError, describeTransportError as describeError } from '@ferry/core/transport';

/** Why a message was dead-lettered; travels in the `x-ferry-reject-reason` attribute. */
export const REJECT_REASONS = TRANSPORT_REJECT_REASONS;

export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

/**
 * Entry codes of a batch's `Failed` list that retrying the same entry cannot fix. Every
 * other code (throttling, internal errors, codes this table does not know) is retryable:
 * the outbox's `max_retries` bounds a wrong guess, while a wrong "permanent" would fail an
 * event that a retry would have delivered.
 */
export const PERMANENT_ENTRY_CODES: ReadonlySet<string> = new Set([
  'InvalidParameterValue',
  'InvalidAttributeValue',
  'InvalidAttributeName',
  'InvalidMessageContents',
  'MissingParameter',
  'MessageTooLong',
  'BatchEntryIdsNotDistinct',
  'InvalidBatchEntryId',
  'UnsupportedOperation',
  'ReceiptHandleIsInvalid',
]);

/** Whole-request error names after which no entry of the request can succeed on retry. */
export const PERMANENT_REQUEST_ERRORS: ReadonlySet<string> = new Set([
  'InvalidAddress',
  'InvalidSecurity',
  'UnsupportedOperation',
]);

export function isPermanentEntryCode(code: string | undefined): boolean {
  return code !== undefined && PERMANENT_ENTRY_CODES.has(code);
}

export function errorName(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'name' in error && typeof error.name === 'string') {
    return error.name;
  }
  return undefined;
}

/**
 * Whole-request failures that say the endpoint, not the messages, is in trouble: socket errors,
 * SDK timeouts, any 5xx answer, and endpoint-level throttling. The publisher reports them
 * `unavailable` (the relay spends no attempt and may open its circuit).
 */
export function isUnavailableRequestError(error: unknown): boolean {
  return isConnectionLevelError(error, (e) => {
    const name = errorName(e);
    if (name === 'TimeoutError' || name === 'ThrottlingException' || name === 'RequestThrottled') return true;
    const status = (e as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
    return typeof status === 'number' && status >= 500;
  });
}
