import { FerryError } from '../errors';
import { stripUrlCredentials } from '../redact/urlCredentials';

/**
 * Why a transport dead-lettered a message; travels in the `x-ferry-reject-reason` header
 * (or attribute). Every transport uses these; some add reasons of their own. The input
 * rules (invalid_text … reserved_header) are also the `rejectReason` of an invalid
 * acceptance outcome and the `details.rule` of a FerryValidationError from emit or accept.
 */
export const TRANSPORT_REJECT_REASONS = {
  missingIdentity: 'missing_identity',
  unparseableBody: 'unparseable_body',
  payloadTooLarge: 'payload_too_large',
  inboxInvalid: 'inbox_invalid',
  fingerprintConflict: 'fingerprint_conflict',
  /** Accepting the message alone still failed with an error that is not batch-wide (acceptIsolated). */
  acceptanceFailed: 'acceptance_failed',
  /** The consumer's tenant is fixed and the message's tenant header names another one. */
  tenantMismatch: 'tenant_mismatch',
  /** The consumer's tenant function threw or returned something other than a string or null. */
  tenantUnresolved: 'tenant_unresolved',
  /** A string (payload key or value, id, header) holds NUL or an unpaired UTF-16 surrogate. */
  invalidText: 'invalid_text',
  /**
   * A header ferry reads (x-ferry-message-id, x-ferry-tenant-id, x-ferry-event-type) carried more
   * than once with different values (Kafka allows a name to repeat): no value is chosen.
   */
  ambiguousHeader: 'ambiguous_header',
  /** More headers, or more header bytes, than the limit. */
  headersTooLarge: 'headers_too_large',
  /** The payload nests deeper than the limit. */
  payloadTooDeep: 'payload_too_deep',
  /** emit only: a header name ferry writes itself (x-ferry-*, traceparent, tracestate). */
  reservedHeader: 'reserved_header',
  /** The inbox has handlers, and none for this message's consumer name. */
  handlerMissing: 'handler_missing',
} as const;

export type TransportRejectReason = (typeof TRANSPORT_REJECT_REASONS)[keyof typeof TRANSPORT_REJECT_REASONS];

/** Code of the `invalid` result acceptIsolated gives an input whose acceptance threw something that is not a FerryError. */
export const ACCEPTANCE_FAILED_CODE = 'acceptance_failed';

const KNOWN_REASONS: ReadonlySet<string> = new Set(Object.values(TRANSPORT_REJECT_REASONS));

/**
 * The reject reason for an `invalid` acceptance result: its `rejectReason` when it carries a
 * known one (core's Inbox sets it), else `acceptance_failed` for acceptIsolated's code, else
 * `inbox_invalid`. Also takes the result's code alone.
 */
export function invalidResultReason(
  result: string | { readonly code: string; readonly rejectReason?: string },
): TransportRejectReason {
  const { code, rejectReason } =
    typeof result === 'string' ? { code: result, rejectReason: undefined } : result;
  if (rejectReason !== undefined && KNOWN_REASONS.has(rejectReason))
    return rejectReason as TransportRejectReason;
  return code === ACCEPTANCE_FAILED_CODE
    ? TRANSPORT_REJECT_REASONS.acceptanceFailed
    : TRANSPORT_REJECT_REASONS.inboxInvalid;
}

/**
 * A broker failure as callers see it: retriable `FERRY_TRANSPORT_ERROR` with the cause attached
 * and described after the message; without a cause, the message alone (it read "...: unknown
 * error").
 */
export function transportError(
  message: string,
  cause?: unknown,
  describe: (error: unknown) => string = describeTransportError,
): FerryError {
  const text = stripUrlCredentials(message);
  if (cause === undefined) return new FerryError('FERRY_TRANSPORT_ERROR', text);
  return new FerryError('FERRY_TRANSPORT_ERROR', `${text}: ${describe(cause)}`, { cause });
}

export function closedError(what: string): FerryError {
  return new FerryError('FERRY_CLOSED', `${what} is closed`);
}

/**
 * An error's message (or its string form) for logs, events and error messages, without the user
 * and password of a URL it quotes. Never throws: an application function may throw anything,
 * also a value whose reading throws (a Proxy, a throwing getter or toString).
 */
export function describeTransportError(error: unknown): string {
  try {
    if (error instanceof Error) return stripUrlCredentials(String(error.message));
    if (error === undefined) return 'unknown error';
    return stripUrlCredentials(String(error));
  } catch {
    return 'a thrown value that could not be read';
  }
}

/**
 * Why an acceptance, a broker call or a probe failed, for observer events, log lines and health
 * checks: a FerryError as `CODE: message` (the code is what a dashboard groups by), anything else
 * by its message; a URL's user and password left out (describeTransportError). Never throws.
 */
export function describeCause(error: unknown): string {
  try {
    if (error instanceof FerryError) return `${error.code}: ${describeTransportError(error)}`;
  } catch {
    // A thrown value whose prototype cannot be read (a Proxy): described below.
  }
  return describeTransportError(error);
}

/** Socket-level error codes: the peer could not be reached or the connection broke. */
const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The same codes as they appear in Node's messages ("connect ECONNREFUSED 127.0.0.1:5672"). */
const CONNECTION_ERROR_TEXT = new RegExp(`\\b(${[...CONNECTION_ERROR_CODES].join('|')})\\b`);

/**
 * True when `error` or an error in its cause chain (depth 10) is a socket-level failure
 * (`code` in the table above, or, for clients that re-wrap errors and drop `code` such as the
 * AWS SDK across realms, the code in the message) or satisfies `extra` (a transport's own
 * connection-level test). Publishers report such failures as the `unavailable` outcome.
 */
export function isConnectionLevelError(error: unknown, extra?: (error: object) => boolean): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current !== null && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && CONNECTION_ERROR_TEXT.test(message)) return true;
    if (extra?.(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
