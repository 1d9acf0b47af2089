import { FERRY_HEADERS } from '../contracts';
import { TRANSPORT_REJECT_REASONS } from '../transport/errors';
import type { JsonFault } from './json';
import { pathSegment, textFault } from './text';

export interface HeaderLimits {
  /** Headers besides ferry's own (FERRY_HEADERS), which a publisher adds to the event's. */
  readonly maxHeaders: number;
  /** UTF-8 bytes of all names and values together. */
  readonly maxHeaderBytes: number;
}

/** Names ferry writes itself; an application may not set them as plain headers (any case). */
const RESERVED = /^(x-ferry-.*|traceparent|tracestate)$/i;

export function isReservedHeader(name: string): boolean {
  return RESERVED.test(name);
}

/**
 * ferry's own header names: a publisher adds them to an event's headers, so they do not count
 * against maxHeaders (an event emit accepted must not reach a consumer as `headers_too_large`);
 * their bytes do count.
 */
const FERRY_HEADER_NAMES: ReadonlySet<string> = new Set(Object.values(FERRY_HEADERS));

/**
 * The first fault of a headers object: not an object of strings, an empty name, invalid
 * text in a name or value, too many headers or too many bytes (`headers_too_large`), and,
 * with `rejectReserved`, a reserved name (`reserved_header`).
 */
export function headersFault(
  headers: unknown,
  limits: HeaderLimits,
  rejectReserved: boolean,
): JsonFault | null {
  const invalid = (path: string, reason: string): JsonFault => ({ path, reason, rule: 'inbox_invalid' });
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return invalid('headers', 'must be an object of string values');
  }
  const entries = Object.entries(headers);
  const counted = entries.filter(([name]) => !FERRY_HEADER_NAMES.has(name)).length;
  if (counted > limits.maxHeaders) {
    return {
      path: 'headers',
      reason: `more than ${limits.maxHeaders} headers besides ferry's`,
      rule: 'headers_too_large',
    };
  }
  let bytes = 0;
  for (const [name, value] of entries) {
    const path = `headers.${pathSegment(name)}`;
    if (name.length === 0) return invalid('headers', 'header names must not be empty');
    if (typeof value !== 'string') return invalid(path, 'must be a string');
    const fault = textFault(name) ?? textFault(value);
    if (fault !== null) return { path, reason: fault, rule: TRANSPORT_REJECT_REASONS.invalidText };
    if (rejectReserved && isReservedHeader(name)) {
      return { path, reason: 'is reserved for ferry; use the envelope field', rule: 'reserved_header' };
    }
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
  }
  if (bytes > limits.maxHeaderBytes) {
    return {
      path: 'headers',
      reason: `larger than ${limits.maxHeaderBytes} bytes`,
      rule: 'headers_too_large',
    };
  }
  return null;
}
