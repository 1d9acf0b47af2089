import { FERRY_HEADERS, type OutboxMessage } from '../contracts';
import { isReservedHeader } from '../validate/headers';
import { replacesTraceValue, traceHeaderName } from '../tracing/w3c';
import { textFault } from '../validate/text';
import { setOwnProperty } from './ownProperty';
import { strictUtf8Text } from './utf8';

/** ferry's headers for one outbox message, in wire order; null where the message has no value. */
export function ferryHeaderValues(message: OutboxMessage): readonly (readonly [string, string | null])[] {
  return [
    [FERRY_HEADERS.messageId, message.id],
    [FERRY_HEADERS.eventType, message.type],
    [FERRY_HEADERS.tenantId, message.tenantId],
    [FERRY_HEADERS.correlationId, message.correlationId],
    [FERRY_HEADERS.causationId, message.causationId],
    [FERRY_HEADERS.traceparent, message.traceparent],
    [FERRY_HEADERS.tracestate, message.tracestate],
  ];
}

/**
 * The event's own headers without any reserved name (`x-ferry-*`, `traceparent`, `tracestate`,
 * any case). emit refuses those names, but a row written before that check, by SQL or by another
 * tool may still carry them; no publisher lets such a header stand in for ferry's own.
 */
export function eventHeaders(message: OutboxMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (!isReservedHeader(name)) setOwnProperty(headers, name, value);
  }
  return headers;
}

/** The event's own headers (eventHeaders) overlaid with ferry's that have a value. */
export function outboxHeaders(message: OutboxMessage): Record<string, string> {
  const headers = eventHeaders(message);
  for (const [name, value] of ferryHeaderValues(message)) {
    if (value !== null) setOwnProperty(headers, name, value);
  }
  return headers;
}

/**
 * A header a transport received but cannot read as text (a nested table, a boolean, a number
 * that is not an exact integer, ...): `unreadable` says what it is, e.g. "a field table, not text".
 */
export interface UnreadableHeader {
  readonly unreadable: string;
}

/** ferry's headers read off a delivery; an absent or empty value is undefined. */
export interface FerryHeaderValues {
  readonly messageId: string | undefined;
  readonly tenantId: string | undefined;
  readonly eventType: string | undefined;
  /**
   * Why the delivery must be dead-lettered as `invalid_text`, naming the header (one of the three
   * arrived as bytes that are not UTF-8, or as a value the transport cannot read as text, so its
   * value is undefined), or null.
   */
  readonly fault: string | null;
}

/**
 * Reads ferry's identity, tenant and type headers through `get` (a header or attribute lookup).
 * A value that arrives as bytes is decoded as strict UTF-8 (strictUtf8Text): bytes that are not
 * are never decoded lossily, since two ids or tenants that differ only in invalid bytes would
 * become one (a message lost as a duplicate, two tenants in one scope). Such a header reads as
 * undefined and `fault` names it; the transport dead-letters the delivery as `invalid_text`.
 * So does a header `get` reports unreadable (UnreadableHeader): present, so never replaced by a
 * fallback, and not text. Text a client library already decoded is taken as it is.
 */
export function readFerryHeaders(
  get: (name: string) => string | Uint8Array | UnreadableHeader | undefined,
): FerryHeaderValues {
  const faults: string[] = [];
  const read = (name: string): string | undefined => {
    const value = get(name);
    if (value === undefined || typeof value === 'string') return nonEmptyValue(value);
    if ('unreadable' in value) {
      faults.push(`the ${name} header is ${value.unreadable}`);
      return undefined;
    }
    const text = strictUtf8Text(value);
    if (text === undefined) faults.push(`the ${name} header is bytes that are not valid UTF-8`);
    return nonEmptyValue(text);
  };
  const values = {
    messageId: read(FERRY_HEADERS.messageId),
    tenantId: read(FERRY_HEADERS.tenantId),
    eventType: read(FERRY_HEADERS.eventType),
  };
  return { ...values, fault: faults.length === 0 ? null : faults.join('; ') };
}

/** The value, or undefined when it is null, undefined or empty. */
export function nonEmptyValue(value: string | null | undefined): string | undefined {
  return value === null || value === undefined || value.length === 0 ? undefined : value;
}

/**
 * A delivery header's name or value as text PostgreSQL stores faithfully, or undefined when it
 * is not: bytes that are not valid UTF-8, or text with NUL or an unpaired surrogate (textFault).
 */
export function storableHeaderText(value: string | Uint8Array): string | undefined {
  const text = typeof value === 'string' ? value : strictUtf8Text(value);
  return text !== undefined && textFault(text) === null ? text : undefined;
}

/**
 * ferry's envelope headers, stored with a delivery under their exact name as the transport
 * received them. The transport's own (attempts, reject reason) are not among them.
 */
const ENVELOPE_HEADERS: ReadonlySet<string> = new Set([
  FERRY_HEADERS.messageId,
  FERRY_HEADERS.eventType,
  FERRY_HEADERS.tenantId,
  FERRY_HEADERS.correlationId,
  FERRY_HEADERS.causationId,
  FERRY_HEADERS.traceparent,
  FERRY_HEADERS.tracestate,
]);

/**
 * Puts one delivery header into the inbox input's `headers` when its name and value are both
 * storable text (storableHeaderText). Every transport passes headers through here: a header that
 * is not text (binary, invalid UTF-8, NUL, a lone surrogate) is left out, and its message is
 * accepted without it. ferry's own identity, tenant and type are read apart (readFerryHeaders).
 * A reserved name (isReservedHeader: `x-ferry-*`, `traceparent`, `tracestate`, any case) is
 * kept only when it is one of ferry's envelope headers by its exact name and `source` is
 * `'delivery'` (a header or attribute of the delivery itself); the transport's own
 * (`x-ferry-transport-attempts`, `x-ferry-reject-reason`), any other case of a reserved name and
 * every reserved name among an event's own headers (`source` `'event'`: SQS's packed
 * `x-ferry-headers`) is left out, so no header stands in for ferry's tenant or attempt count.
 */
export function putStorableHeader(
  headers: Record<string, string>,
  name: string | Uint8Array,
  value: string | Uint8Array,
  source: 'delivery' | 'event' = 'delivery',
): void {
  const given = storableHeaderText(name);
  if (given === undefined || given.length === 0) return;
  // A trace header in another case (`Traceparent`) is stored under ferry's name: to W3C Trace
  // Context the names are case-insensitive. Of two, replacesTraceValue chooses, in either order
  // (a valid value, then the exact name, then the first).
  const trace = source === 'delivery' ? traceHeaderName(given) : undefined;
  const key = trace ?? given;
  if (isReservedHeader(key) && (source === 'event' || !ENVELOPE_HEADERS.has(key))) return;
  const text = storableHeaderText(value);
  if (text === undefined) return;
  const current =
    trace !== undefined && Object.prototype.hasOwnProperty.call(headers, key) ? headers[key] : undefined;
  if (
    trace !== undefined &&
    current !== undefined &&
    !replacesTraceValue(trace, text, key === given, current)
  )
    return;
  setOwnProperty(headers, key, text);
}
