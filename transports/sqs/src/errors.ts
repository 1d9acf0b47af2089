import { FerryError, type PublishOutcome } from '@ferry/core';
import {
  describeTransportError,
  isConnectionLevelError,
  stripUrlCredentials,
  transportError,
  TRANSPORT_REJECT_REASONS,
} from '@ferry/core/transport';

/**
 * SQS failures are translated here, at the boundary: callers only ever see a FerryError
 * with code `FERRY_TRANSPORT_ERROR` (retriable), `FERRY_PERMANENT_FAILURE` or `FERRY_CLOSED`
 * (requestError), and the publisher an outcome status (publishStatus).
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

/**
 * Error names (the SDK names an error by SQS's code) of a request SQS refused for its credentials
 * or their permissions: no retry can help until an operator fixes them, as with RabbitMQ's 403
 * ACCESS_REFUSED. Any other 401 or 403 answer counts too.
 */
export const REFUSED_REQUEST_ERRORS: ReadonlySet<string> = new Set([
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'InvalidAccessKeyId',
  'MissingAuthenticationToken',
  'MissingAuthenticationTokenException',
  'AccessDenied',
  'AccessDeniedException',
  'ExpiredToken',
  'ExpiredTokenException',
  'AuthFailure',
]);

/**
 * The REFUSED_REQUEST_ERRORS that refuse the connection's credentials themselves (an expired or
 * unknown token or key, a bad signature), not a permission of this destination: every host answers
 * them alike, so they say nothing against the host that did (isCredentialRefusal).
 */
export const CREDENTIAL_REFUSAL_ERRORS: ReadonlySet<string> = new Set(
  [...REFUSED_REQUEST_ERRORS].filter((name) => name !== 'AccessDenied' && name !== 'AccessDeniedException'),
);

/**
 * Whether `error` or an error in its cause chain refuses the connection's credentials
 * (CREDENTIAL_REFUSAL_ERRORS, or HTTP 401: not authenticated), wherever it was answered. An
 * `AccessDenied` or a 403 without such a code is a refusal of a permission: it may be the
 * destination's (another account's queue policy).
 */
export function isCredentialRefusal(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current !== null && typeof current === 'object'; depth += 1) {
    const name = errorName(current);
    if (name !== undefined && CREDENTIAL_REFUSAL_ERRORS.has(name)) return true;
    if (answeredStatus(current) === 401) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** SQS's codes for a queue URL or name that names no queue. */
const MISSING_QUEUE_ERRORS: ReadonlySet<string> = new Set([
  'QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue',
]);

/** Whether `error` is SQS saying the queue URL or name names no queue (MISSING_QUEUE_ERRORS). */
export function isMissingQueueError(error: unknown): boolean {
  return MISSING_QUEUE_ERRORS.has(errorName(error) ?? '');
}

/** The HTTP status SQS answered a failed request with; undefined when it did not answer. */
function answeredStatus(error: unknown): number | undefined {
  const status = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Whether `error` or an error in its cause chain is SQS refusing the credentials (REFUSED_REQUEST_ERRORS). */
export function isRefusedRequestError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current !== null && typeof current === 'object'; depth += 1) {
    const name = errorName(current);
    if (name !== undefined && REFUSED_REQUEST_ERRORS.has(name)) return true;
    const status = answeredStatus(current);
    if (status === 401 || status === 403) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Error names of a credential provider that failed before any request was signed: the SDK's own
 * (`CredentialsProviderError`: its default chain found no credentials; `TokenProviderError`), and
 * what a connection's provider function threw (CredentialWatch names it so).
 */
export const CREDENTIALS_PROVIDER_ERRORS: ReadonlySet<string> = new Set([
  'CredentialsProviderError',
  'TokenProviderError',
]);

/** Whether `error` or an error in its cause chain is a credential provider's failure (CREDENTIALS_PROVIDER_ERRORS). */
export function isCredentialsProviderError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current !== null && typeof current === 'object'; depth += 1) {
    if (CREDENTIALS_PROVIDER_ERRORS.has(errorName(current) ?? '')) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * What a connection's credential provider function threw, as the SDK passes it on: named
 * `CredentialsProviderError` (as the SDK's own), its message the thrown value's, the value its cause.
 */
export function credentialsProviderFailure(thrown: unknown): Error {
  const error = new Error(describeTransportError(thrown), { cause: thrown });
  error.name = 'CredentialsProviderError';
  return error;
}

/**
 * The outcome of messages whose whole request failed with `error` (never `sent`). A request
 * refused for its credentials, one whose credential provider failed or did not answer, and one the
 * endpoint did not answer are `unavailable`: no attempt of the messages is spent on them.
 */
export function publishStatus(error: unknown): Exclude<PublishOutcome['status'], 'sent'> {
  const name = errorName(error);
  if (name !== undefined && PERMANENT_REQUEST_ERRORS.has(name)) return 'permanent';
  return isRefusedRequestError(error) || isCredentialsProviderError(error) || isUnavailableRequestError(error)
    ? 'unavailable'
    : 'retryable';
}

/**
 * A failed request as callers see it (`given` names it: "GetQueueAttributes of queue …", shown
 * without a URL's user and password): a FerryError as it is (a credential provider that did not
 * answer, a closed connection); FERRY_TRANSPORT_ERROR naming the credential provider when it
 * failed (retriable: a provider may answer later);
 * FERRY_PERMANENT_FAILURE when SQS refused the credentials or the queue does not exist; else
 * FERRY_TRANSPORT_ERROR saying whether SQS answered with an error or did not answer at all.
 */
export function requestError(given: string, error: unknown): FerryError {
  if (error instanceof FerryError) return error;
  const what = stripUrlCredentials(given);
  if (isCredentialsProviderError(error)) {
    return transportError(`SQS credentials provider failed, ${what} was not sent`, error);
  }
  const cause = `${errorName(error) ?? 'Error'}: ${describeTransportError(error)}`;
  if (isRefusedRequestError(error)) {
    return new FerryError(
      'FERRY_PERMANENT_FAILURE',
      `SQS refused ${what}: ${cause} (check the credentials and their IAM permissions)`,
      { cause: error, details: { refused: errorName(error) ?? answeredStatus(error) } },
    );
  }
  if (isMissingQueueError(error)) {
    return new FerryError('FERRY_PERMANENT_FAILURE', `${what} failed: the queue does not exist (${cause})`, {
      cause: error,
      details: { refused: 'QueueDoesNotExist' },
    });
  }
  if (answeredStatus(error) !== undefined) return transportError(`SQS answered ${what} with an error`, error);
  return transportError(`SQS did not answer ${what} (endpoint unreachable)`, error);
}

/**
 * A request its deadline (or its caller's signal, `reason`) ended before SQS answered, as the
 * SDK's own abort names it (AbortError), the reason quoted in the text and kept as its cause: a
 * deadline's TimeoutError makes it a request SQS did not answer (isUnavailableRequestError, so
 * `unavailable` to the publisher), any other reason (a caller that stopped) does not.
 */
export function abandonedError(reason: unknown): Error {
  const error = new Error(`request abandoned: ${describeTransportError(reason)}`, { cause: reason });
  error.name = 'AbortError';
  return error;
}

/**
 * A request whose credentials had not come when its deadline (`reason`) ended it: the credential
 * provider did not answer. Retriable: a provider may answer later (it is asked again).
 */
export function credentialsTimeout(reason: unknown): FerryError {
  const error = transportError(
    'SQS credentials provider did not answer by the deadline of the request',
    reason,
  );
  CREDENTIALS_TIMEOUTS.add(error);
  return error;
}

/** The errors credentialsTimeout made. */
const CREDENTIALS_TIMEOUTS = new WeakSet<object>();

/**
 * Whether `error` is the connection's credentials failing, wherever the request went: a provider
 * that failed (isCredentialsProviderError) or did not answer (credentialsTimeout), before any
 * request went to a host, or a host refusing the credentials themselves (isCredentialRefusal).
 */
export function isCredentialsFailure(error: unknown): boolean {
  return (
    isCredentialsProviderError(error) ||
    isCredentialRefusal(error) ||
    (error !== null && typeof error === 'object' && CREDENTIALS_TIMEOUTS.has(error))
  );
}
