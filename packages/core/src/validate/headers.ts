import { FERRY_HEADERS } from '../contracts';
import { TRANSPORT_REJECT_REASONS } from '../transport/errors';
import { isPlainObject, kindOf, type JsonFault } from './json';
import { pathSegment, textFault } from './text';

export interface HeaderLimits {
  /** Headers besides ferry's own (FERRY_HEADERS), which a publisher adds to the event's. */
  readonly maxHeaders: number;
  /** UTF-8 bytes of all names and values together. */
  readonly maxHeaderBytes: number;
}

/**
 * Names ferry writes itself; an application may not set them as plain headers (any case), nor
 * any `x-ferry-` name whatever follows (`s`: a line break in it too, review 94).
 */
const RESERVED = /^(x-ferry-.*|traceparent|tracestate)$/is;

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
 * Why headers are not of the shape every header set ferry stores has, or null. `name` is the
 * first header whose value is not a string (`kind` says what it is), or null when the headers
 * themselves are no plain object (isPlainObject).
 */
export interface HeaderShapeFault {
  readonly name: string | null;
  readonly kind: string;
}

/**
 * The shape rule of headers, wherever they come from (emit, accept, a row read back that SQL may
 * have written): a plain object whose values are all strings. Names and values as text, counts,
 * sizes and reserved names are headersFault's further rules.
 */
export function headerShapeFault(headers: unknown): HeaderShapeFault | null {
  if (!isPlainObject(headers)) return { name: null, kind: kindOf(headers) };
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') return { name, kind: kindOf(value) };
  }
  return null;
}

/** A stored row's headerShapeFault as the relay and the inbox report it. */
export function headerShapeReason(fault: HeaderShapeFault): string {
  return fault.name === null
    ? `headers is ${fault.kind}, not a JSON object of strings`
    : `headers: ${JSON.stringify(fault.name)} is ${fault.kind}, not a string`;
}

/**
 * The headers an application gave (emit's envelope, an acceptance input), copied once: a plain
 * object into a plain object of its own enumerable string-keyed entries, each value read once (a
 * getter answering otherwise later can neither store another text nor pass the checks with one),
 * its symbol keys kept (without their values) for headersFault to refuse; anything else as it is.
 * Copied with Object.entries alone, a symbol-keyed header was dropped without a word (review 88),
 * where the payload refuses a symbol key.
 */
export function copyHeaders(headers: unknown): unknown {
  if (!isPlainObject(headers)) return headers;
  const copy: Record<string | symbol, unknown> = Object.fromEntries(Object.entries(headers));
  for (const key of Object.getOwnPropertySymbols(headers)) copy[key] = undefined;
  return copy;
}

/** At most this much of a symbol's description is shown in a refusal. */
const MAX_SHOWN_SYMBOL_CHARS = 100;

/**
 * The first fault of a headers object: not of the shape (headerShapeFault), a symbol key (symbol
 * keys are not JSON: refused as the payload's are, never left out), an empty name,
 * invalid text in a name or value, too many headers or too many bytes (`headers_too_large`),
 * and, with `rejectReserved`, a reserved name (`reserved_header`).
 */
export function headersFault(
  headers: unknown,
  limits: HeaderLimits,
  rejectReserved: boolean,
): JsonFault | null {
  const invalid = (path: string, reason: string): JsonFault => ({ path, reason, rule: 'inbox_invalid' });
  if (isPlainObject(headers)) {
    const [symbol] = Object.getOwnPropertySymbols(headers);
    if (symbol !== undefined) {
      const shown = String(symbol.description ?? '').slice(0, MAX_SHOWN_SYMBOL_CHARS);
      return invalid('headers', `symbol keys are not JSON (Symbol(${JSON.stringify(shown)}))`);
    }
  }
  const shape = headerShapeFault(headers);
  if (shape !== null) {
    return shape.name === null
      ? invalid('headers', 'must be an object of string values')
      : invalid(`headers.${pathSegment(shape.name)}`, 'must be a string');
  }
  const entries = Object.entries(headers as Record<string, string>);
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
