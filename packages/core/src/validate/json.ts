import { TRANSPORT_REJECT_REASONS, type TransportRejectReason } from '../transport/errors';
import { jsonbNumberLength, valueNumberFault } from './numbers';
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
 * Where a value is held: the object or array holding it and its key or index there (null for the
 * root value, held by nothing).
 */
export interface JsonMember {
  readonly container: object;
  readonly key: string | number;
}

/**
 * Why a number at `path` (as jsonFault names it: `payload.a.b[2]`, built when called), held as
 * `member`, cannot travel unchanged, or null: valueNumberFault, or payloadNumberRule's for a
 * parsed body.
 */
export type NumberRule = (value: number, path: () => string, member: JsonMember | null) => string | null;

/** How jsonFault names the member `key` (an object's key or an array's index) of the value at `path`. */
export function jsonMemberPath(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}.${pathSegment(key)}`;
}

/** A scalar's JSON text, the fault that keeps it out, 'date' or 'container'. */
function scalarFault(
  value: unknown,
  at: Place,
  numbers: NumberRule,
): Omit<JsonFault, 'path'> | { readonly text: string } | 'date' | 'container' {
  if (value === null) return { text: 'null' };
  if (typeof value === 'boolean') return { text: value ? 'true' : 'false' };
  if (typeof value === 'string') {
    const fault = textFault(value);
    return fault === null
      ? { text: JSON.stringify(value) }
      : { reason: fault, rule: TRANSPORT_REJECT_REASONS.invalidText };
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { reason: 'numbers must be finite', rule: 'inbox_invalid' };
    const { container, key } = at;
    const member = container === null ? null : { container, key };
    const fault = numbers(value, () => pathOf(at), member);
    return fault === null ? { text: JSON.stringify(value) } : { reason: fault, rule: 'inbox_invalid' };
  }
  if (value instanceof Date) return 'date';
  if (typeof value !== 'object') return { reason: `${typeof value} is not JSON`, rule: 'inbox_invalid' };
  if (!Array.isArray(value) && !isPlainObject(value)) {
    return { reason: 'only plain objects, arrays and Dates are allowed', rule: 'inbox_invalid' };
  }
  return 'container';
}

/**
 * What a Date is written as: what its toJSON returns, called once (JSON.stringify writes exactly
 * that: Date.prototype.toJSON returns `this.toISOString()`, whatever a subclass makes it return,
 * or null when the date's primitive value is not finite, an own `valueOf` included), to be walked
 * in the Date's place; or why it cannot be.
 */
function dateJson(date: Date): { readonly json: unknown } | Omit<JsonFault, 'path'> {
  const toJSON = date.toJSON as unknown;
  if (typeof toJSON !== 'function')
    return { reason: 'a Date without toJSON is not JSON', rule: 'inbox_invalid' };
  const json: unknown = toJSON.call(date, '');
  if (json === null || json === undefined)
    return { reason: 'an invalid Date is not JSON', rule: 'inbox_invalid' };
  // JSON.stringify would write a Date returned by toJSON as an object of its own keys.
  if (json instanceof Date) return { reason: 'toJSON returns a Date', rule: 'inbox_invalid' };
  return { json };
}

/** An array's own keys other than its indexes (`index`, `input`, `groups` of a match): JSON drops them. */
function namedArrayKey(list: readonly unknown[]): string | undefined {
  const keys = Object.keys(list);
  if (keys.length <= list.length) return undefined;
  return keys.find((key) => !/^(0|[1-9][0-9]*)$/.test(key) || Number(key) >= list.length);
}

/**
 * Where a value is, built into a path string (`payload.a.b[2]`, jsonMemberPath) only when a fault
 * or a number rule needs it: the walk visits every value, and few are ever named.
 */
interface Place {
  readonly parent: Place | null;
  /** The member's key or index; the root's name at the root. */
  readonly key: string | number;
  /** The object or array holding the member (with `key`, a NumberRule's `member`); null at the root. */
  readonly container: object | null;
}

/** The path `place` names (the root's name, then jsonMemberPath for each member). */
function pathOf(place: Place): string {
  const keys: (string | number)[] = [];
  let at: Place = place;
  for (; at.parent !== null; at = at.parent) keys.push(at.key);
  let path = String(at.key);
  for (let i = keys.length - 1; i >= 0; i -= 1) path = jsonMemberPath(path, keys[i]!);
  return path;
}

type Frame =
  | {
      readonly kind: 'value';
      readonly value: unknown;
      readonly at: Place;
      readonly depth: number;
      /** What a Date's toJSON returned: never read as a Date again (see visitValue). */
      readonly fromDate?: true;
    }
  | {
      readonly kind: 'array';
      readonly list: readonly unknown[];
      readonly length: number;
      index: number;
      readonly at: Place;
      readonly depth: number;
    }
  | {
      readonly kind: 'object';
      /** The object whose entries these are. */
      readonly container: object;
      readonly entries: ReadonlyArray<[string, unknown]>;
      index: number;
      readonly at: Place;
      readonly depth: number;
    };

interface WalkOptions {
  readonly maxDepth: number;
  readonly root: string;
  readonly numbers: NumberRule;
  /** Write the JSON text, refusing it (payload_too_large, at `root`) past this many characters. */
  readonly maxChars?: number;
  /** Write each object's members in code-unit order of their keys (canonicalJson's order). */
  readonly canonical?: boolean;
}

/** The JSON text of a value (`text` null when it was not asked for), or the first fault. */
type WalkResult =
  | {
      readonly text: string | null;
      readonly fault: null;
      /**
       * Characters PostgreSQL's jsonb text of the value has beyond `text` (jsonbGrowth): what the
       * relay receives back is `text`'s UTF-8 bytes plus these (all ASCII). 0 when not writing.
       */
      readonly jsonbGrowth: number;
    }
  | { readonly text: null; readonly fault: JsonFault };

/**
 * Walks a JSON value without recursion (so no input can exhaust the stack) and returns the
 * first fault: a value JSON cannot carry, a string or object key holding invalid text, or
 * an object / array nested deeper than `maxDepth` (the value itself is depth 1), a number JSON
 * would change (`numbers`, valueNumberFault unless told: -0, an integer beyond 2^53-1), an invalid
 * Date, a symbol key, an array with named properties. A Date is checked as what its toJSON
 * returns (dateJson).
 */
export function jsonFault(
  value: unknown,
  maxDepth: number,
  root = 'payload',
  numbers: NumberRule = valueNumberFault,
): JsonFault | null {
  return walkJson(value, { maxDepth, root, numbers }).fault;
}

/**
 * jsonFault's walk, writing the JSON text as it goes: every value is read once, and the text is
 * written from what was read and checked, never serialized again from the application's object
 * (which a getter, a Proxy, a Date subclass or an array's named properties make answer otherwise).
 * Past `maxChars` characters (a UTF-8 byte or more each) the walk stops with payload_too_large at
 * `root`, before writing a text longer than a JavaScript string can be. `canonical`: each object's
 * members in code-unit order of their keys, so the text is canonicalJson's of the value written.
 */
export function jsonText(
  value: unknown,
  limits: { readonly maxDepth: number; readonly maxChars: number; readonly canonical?: boolean },
  root = 'payload',
  numbers: NumberRule = valueNumberFault,
): WalkResult {
  return walkJson(value, { ...limits, root, numbers });
}

function walkJson(value: unknown, options: WalkOptions): WalkResult {
  let place: Place = { parent: null, key: options.root, container: null };
  const stack: Frame[] = [{ kind: 'value', value, at: place, depth: 1 }];
  const pieces: string[] = [];
  const writing = options.maxChars !== undefined;
  const maxChars = options.maxChars ?? Infinity;
  let chars = 0;
  let jsonbGrowth = 0;
  const tooLarge = (): WalkResult => ({
    text: null,
    fault: {
      path: options.root,
      reason: `larger than ${maxChars} bytes`,
      rule: TRANSPORT_REJECT_REASONS.payloadTooLarge,
    },
  });
  /** Writes `text`; false once the text is over maxChars. */
  const write = (text: string): boolean => {
    if (!writing) return true;
    chars += text.length;
    pieces.push(text);
    return chars <= maxChars;
  };
  const grow = (extra: number): void => {
    jsonbGrowth += extra;
  };
  const walk: Walk = { options, stack, write, grow, visiting: (at) => (place = at) };
  try {
    for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
      const step = visit(frame, walk);
      if (step === 'too large') return tooLarge();
      if (step !== null) return { text: null, fault: step };
    }
  } catch (error) {
    // A getter or a Proxy trap that throws: the application's value cannot be read as JSON.
    const reason = `could not be read: ${error instanceof Error ? error.message : typeof error}`;
    return {
      text: null,
      fault: { path: pathOf(place), reason: reason.slice(0, 200), rule: 'inbox_invalid' },
    };
  }
  return { text: writing ? pieces.join('') : null, fault: null, jsonbGrowth: writing ? jsonbGrowth : 0 };
}

/** What every step of one walk shares. */
interface Walk {
  readonly options: WalkOptions;
  readonly stack: Frame[];
  readonly write: (text: string) => boolean;
  /** Counts characters jsonb's text adds to what was written (WalkResult's jsonbGrowth). */
  readonly grow: (extra: number) => void;
  /** Notes the place being read, named if reading it throws. */
  readonly visiting: (at: Place) => void;
}

/** Code-unit order of the keys, as Array.prototype.sort orders strings (canonicalJson's). */
function byKey(a: readonly [string, unknown], b: readonly [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/** One step of the walk: a member of an array or object in progress, or one value. */
function visit(frame: Frame, walk: Walk): JsonFault | 'too large' | null {
  const { stack, write } = walk;
  if (frame.kind === 'array') {
    if (frame.index === frame.length) return write(']') ? null : 'too large';
    const index = frame.index++;
    stack.push(frame);
    // jsonb writes ', ' between elements and ': ' after a key, where JSON.stringify writes no space.
    if (index > 0) {
      walk.grow(1);
      if (!write(',')) return 'too large';
    }
    const at: Place = { parent: frame.at, key: index, container: frame.list };
    walk.visiting(at);
    stack.push({ kind: 'value', value: frame.list[index], at, depth: frame.depth });
    return null;
  }
  if (frame.kind === 'object') {
    if (frame.index === frame.entries.length) return write('}') ? null : 'too large';
    const [key, child] = frame.entries[frame.index++] as [string, unknown];
    stack.push(frame);
    const at: Place = { parent: frame.at, key, container: frame.container };
    const keyFault = textFault(key);
    if (keyFault !== null)
      return { path: pathOf(at), reason: `key ${keyFault}`, rule: TRANSPORT_REJECT_REASONS.invalidText };
    walk.grow(frame.index > 1 ? 2 : 1);
    if (!write(`${frame.index > 1 ? ',' : ''}${JSON.stringify(key)}:`)) return 'too large';
    stack.push({ kind: 'value', value: child, at, depth: frame.depth });
    return null;
  }
  return visitValue(frame, walk);
}

function visitValue(frame: Extract<Frame, { kind: 'value' }>, walk: Walk): JsonFault | 'too large' | null {
  const { options, stack, write } = walk;
  const { value, at, depth } = frame;
  walk.visiting(at);
  // A string longer than the room left is too large before it is checked or copied.
  if (typeof value === 'string' && options.maxChars !== undefined && value.length > options.maxChars)
    return 'too large';
  const fault = scalarFault(value, at, options.numbers);
  if (fault === 'date') {
    // A Proxy can answer Date.prototype every other time it is asked: dateJson's own check saw
    // no Date, this one does, and the walk went on at the same depth for ever.
    if (frame.fromDate === true)
      return { path: pathOf(at), reason: 'toJSON returns a Date', rule: 'inbox_invalid' };
    const date = dateJson(value as Date);
    if (!('json' in date)) return { path: pathOf(at), ...date };
    stack.push({ kind: 'value', value: date.json, at, depth, fromDate: true });
    return null;
  }
  if (fault !== 'container') {
    if (!('text' in fault)) return { path: pathOf(at), ...fault };
    if (typeof value === 'number') walk.grow(jsonbNumberLength(fault.text) - fault.text.length);
    return write(fault.text) ? null : 'too large';
  }
  if (depth > options.maxDepth) {
    return { path: pathOf(at), reason: `nesting deeper than ${options.maxDepth}`, rule: 'payload_too_deep' };
  }
  if (Array.isArray(value)) {
    const list = value as unknown[];
    const named = namedArrayKey(list);
    if (named !== undefined) {
      return {
        path: jsonMemberPath(pathOf(at), named),
        reason: 'an array with named properties is not JSON (JSON keeps only its elements)',
        rule: 'inbox_invalid',
      };
    }
    stack.push({ kind: 'array', list, length: list.length, index: 0, at, depth: depth + 1 });
    return write('[') ? null : 'too large';
  }
  if (Object.getOwnPropertySymbols(value as object).length > 0) {
    // JSON.stringify leaves symbol-keyed properties out without a word.
    return { path: pathOf(at), reason: 'symbol keys are not JSON', rule: 'inbox_invalid' };
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (options.canonical === true) entries.sort(byKey);
  stack.push({ kind: 'object', container: value as object, entries, index: 0, at, depth: depth + 1 });
  return write('{') ? null : 'too large';
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
