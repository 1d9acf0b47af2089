import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from '../transport/errors';
import { valueNumberFault } from './numbers';
import { pathSegment, textFault } from './text';

/** Why a value cannot travel as JSON through PostgreSQL unchanged. */
export interface JsonFault {
  /** Where, e.g. `payload.lines[2].sku`. */
  readonly path: string;
  readonly reason: string;
  /** invalid_text, payload_too_deep, or inbox_invalid (not JSON at all). */
  readonly rule: TransportRejectReason;
}

/** An object literal or Object.create(null): no class instance, array or boxed value. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** What a value is, for a message about it: 'a string', 'a number', 'null', 'undefined', 'an array', 'an object'. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Why a number at `path` (as jsonFault names it: `payload.a.b[2]`) cannot travel unchanged, or
 * null: valueNumberFault, or payloadNumberRule's for a parsed body.
 */
export type NumberRule = (value: number, path: string) => string | null;

/** How jsonFault names the member `key` (an object's key or an array's index) of the value at `path`. */
export function jsonMemberPath(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}.${pathSegment(key)}`;
}

function scalarFault(
  value: unknown,
  path: string,
  numbers: NumberRule,
): Omit<JsonFault, 'path'> | null | 'container' | 'ownToJSON' {
  if (value === null || typeof value === 'boolean') return null;
  if (typeof value === 'string') {
    const fault = textFault(value);
    return fault === null ? null : { reason: fault, rule: TRANSPORT_REJECT_REASONS.invalidText };
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { reason: 'numbers must be finite', rule: 'inbox_invalid' };
    const fault = numbers(value, path);
    return fault === null ? null : { reason: fault, rule: 'inbox_invalid' };
  }
  if (value instanceof Date) {
    // A Date whose toJSON is its own serializes as what that returns, which is walked instead.
    if (value.toJSON !== Date.prototype.toJSON) return 'ownToJSON';
    // An invalid Date serializes as null.
    return Number.isNaN(value.getTime())
      ? { reason: 'an invalid Date is not JSON', rule: 'inbox_invalid' }
      : null;
  }
  if (typeof value !== 'object') return { reason: `${typeof value} is not JSON`, rule: 'inbox_invalid' };
  if (!Array.isArray(value) && !isPlainObject(value)) {
    return { reason: 'only plain objects, arrays and Dates are allowed', rule: 'inbox_invalid' };
  }
  return 'container';
}

/**
 * Walks a JSON value without recursion (so no input can exhaust the stack) and returns the
 * first fault: a value JSON cannot carry, a string or object key holding invalid text, or
 * an object / array nested deeper than `maxDepth` (the value itself is depth 1), a number JSON
 * would change (`numbers`, valueNumberFault unless told: -0, an integer beyond 2^53-1), an invalid
 * Date, a symbol key. Dates pass (they serialize as strings); a Date with a toJSON of its own is
 * checked as what that returns.
 */
export function jsonFault(
  value: unknown,
  maxDepth: number,
  root = 'payload',
  numbers: NumberRule = valueNumberFault,
): JsonFault | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 1 }];
  let path = root;
  try {
    return walk(stack, maxDepth, numbers, (at) => (path = at));
  } catch (error) {
    // A getter or a Proxy trap that throws: the application's value cannot be read as JSON.
    const reason = `could not be read: ${error instanceof Error ? error.message : typeof error}`;
    return { path, reason: reason.slice(0, 200), rule: 'inbox_invalid' };
  }
}

function walk(
  stack: Array<{ value: unknown; path: string; depth: number }>,
  maxDepth: number,
  numbers: NumberRule,
  visiting: (path: string) => void,
): JsonFault | null {
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    visiting(item.path);
    const fault = scalarFault(item.value, item.path, numbers);
    if (fault === null) continue;
    if (fault === 'ownToJSON') {
      const json: unknown = (item.value as Date).toJSON();
      // JSON.stringify would write a Date returned by toJSON as an object of its own keys.
      if (json instanceof Date)
        return { path: item.path, reason: 'toJSON returns a Date', rule: 'inbox_invalid' };
      stack.push({ value: json, path: item.path, depth: item.depth });
      continue;
    }
    if (fault !== 'container') return { path: item.path, ...fault };
    if (item.depth > maxDepth) {
      return { path: item.path, reason: `nesting deeper than ${maxDepth}`, rule: 'payload_too_deep' };
    }
    const depth = item.depth + 1;
    if (Array.isArray(item.value)) {
      const list = item.value as unknown[];
      for (let i = list.length - 1; i >= 0; i -= 1)
        stack.push({ value: list[i], path: jsonMemberPath(item.path, i), depth });
      continue;
    }
    if (Object.getOwnPropertySymbols(item.value).length > 0) {
      // JSON.stringify leaves symbol-keyed properties out without a word.
      return { path: item.path, reason: 'symbol keys are not JSON', rule: 'inbox_invalid' };
    }
    const entries = Object.entries(item.value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i] as [string, unknown];
      const path = jsonMemberPath(item.path, key);
      const keyFault = textFault(key);
      if (keyFault !== null)
        return { path, reason: `key ${keyFault}`, rule: TRANSPORT_REJECT_REASONS.invalidText };
      stack.push({ value: child, path, depth });
    }
  }
  return null;
}

/**
 * A `\u0000` or unpaired-surrogate escape in JSON.stringify output, not itself escaped (preceded
 * by an even run of backslashes). JSON.stringify writes NUL and an unpaired surrogate as such
 * escapes (a surrogate pair as is), and PostgreSQL's json and jsonb refuse both (22P05, 22P02).
 */
const REFUSED_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i;

/**
 * Why JSON text written by JSON.stringify cannot be stored, or null. jsonFault walks the value
 * before it is serialized; a Date is written by its own toJSON, which can return anything.
 */
export function serializedTextFault(json: string): string | null {
  if (!json.includes('\\u') || !REFUSED_ESCAPE.test(json)) return null;
  return 'serializes to a NUL character or an unpaired UTF-16 surrogate';
}
