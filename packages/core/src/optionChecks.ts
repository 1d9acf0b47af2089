import { FerryConfigError, FerryValidationError } from './errors';
import { redactText } from './redact/redactor';
import { assertText } from './validate/text';
import { isUuid } from './uuid';

/**
 * The one style of option checking for every ferry component (relay, inbox, transports): each
 * check returns the value it checked or throws FerryConfigError (FERRY_CONFIG_INVALID) naming
 * the option as the user wrote it and showing the value received, e.g.
 * `invalid option pollInterval: must be an integer between 10 and 2147483647, got "1000" (string)`.
 * The arguments of an operator call (knownKeysArgument, requiredArgument and the `...Argument`
 * value checks) are checked the same way but refused as invalid input, FerryValidationError
 * (FERRY_VALIDATION_FAILED, `field` the argument), like every other invalid admin argument.
 */

/**
 * How a received value is shown in an error: `"1000" (string)`, `1.5 (number)`, `null`. It goes
 * through the redaction rules (redact/redactor.ts) before it is clipped: a URL's credentials, a
 * bearer token, values under sensitive keys (a connection string given as an option, e.g.
 * `db: process.env.DATABASE_URL`, is refused in an error logged at start-up).
 */
export function received(value: unknown): string {
  try {
    return shown(value);
  } catch {
    // A revoked proxy, an object whose toJSON and toString throw: the value itself is refused.
    return 'a value that cannot be read';
  }
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `${clip(safeJson(value))} (array)`;
  if (typeof value === 'bigint') return `${value}n (bigint)`;
  if (value instanceof Date) {
    // Its instant, through Date's own methods: a subclass's toISOString may say anything.
    const time = Date.prototype.getTime.call(value);
    return Number.isNaN(time) ? 'Invalid Date' : `${Date.prototype.toISOString.call(value)} (Date)`;
  }
  // JSON has no NaN or Infinity (JSON.stringify(NaN) is "null"): shown as JavaScript writes them.
  if (typeof value === 'number' && !Number.isFinite(value)) return `${value} (number)`;
  // Not through the rules, which take a long number for a phone number.
  if (typeof value === 'number' || typeof value === 'boolean') return `${value} (${typeof value})`;
  return `${clip(typeof value === 'object' ? safeJson(value) : (JSON.stringify(value) ?? String(value)))} (${typeof value})`;
}

/** A value's JSON (its values under sensitive keys are redacted by clip, whatever their type). */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The text at most 60 characters long, through the redaction rules (redactText) first. */
function clip(quoted: string): string {
  // At most 200 characters are read: the text is cut to 60 anyway.
  const text = redactText(quoted.slice(0, 200));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Every key of an options type, as an object so the compiler checks it is complete:
 * `const KEYS = { url: true, ... } satisfies OptionKeys<ConnectionOptions>`.
 */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Option names retired when the transports were given one shape (0.x, see CHANGELOG), with the
 * option that replaced each: refusing one, knownKeysOption names its replacement.
 */
const RENAMED_OPTIONS: Readonly<Record<string, string>> = {
  onEvent: 'observer',
  batchSize: 'maxBatchSize',
  maxAcceptBatch: 'maxBatchSize',
  maxMessages: 'maxBatchSize',
  reconnect: 'reconnectBackoff',
  restartBackoff: 'reconnectBackoff',
  pollErrorBackoff: 'reconnectBackoff',
  deadLetterExchange: 'deadLetter.exchange',
  deadLetterQueue: 'deadLetter.queue',
  deadLetterTopic: 'deadLetter.topic',
  deadLetterRetries: 'deadLetter.sendRetries',
  defaultExchange: 'defaultDestination',
  defaultTopic: 'defaultDestination',
  defaultQueue: 'defaultDestination',
  sendTimeoutMs: 'confirmTimeoutMs',
};

/** `: renamed to maxBatchSize` when `key` is a retired name whose replacement `known` has, else ''. */
function renamedHint(prefix: string, key: string, known: readonly string[]): string {
  const replacement = Object.hasOwn(RENAMED_OPTIONS, key) ? RENAMED_OPTIONS[key] : undefined;
  if (replacement === undefined || !known.includes(replacement.split('.')[0]!)) return '';
  return `: renamed to ${prefix}${replacement}`;
}

/**
 * Checks an options object and returns its snapshot: a fresh plain object holding each option of
 * `keys` the object has (its own or inherited from a class, never from Object.prototype), each
 * read exactly once. Use the snapshot, never the object given, from then on: a getter answering a
 * valid value when checked and another when read again (or a Proxy doing the same) cannot slip a
 * value past its check (review 142). Throws FerryConfigError for the first key of `value` not in
 * `known` (a retired option name is refused with the name that replaced it), for a value that is
 * no object, and for one that cannot be read (a revoked Proxy, a trap or a getter that throws),
 * naming the option (`prefix` is the parent path, `retry.`), never the raw TypeError. `undefined`
 * passes and is returned.
 */
export function knownKeysOption<T>(
  prefix: string,
  value: T,
  keys: readonly string[] | Readonly<Record<string, true>>,
): T {
  if (value === undefined) return value;
  const known = Array.isArray(keys) ? (keys as readonly string[]) : Object.keys(keys);
  const path = prefix.replace(/\.$/, '') || 'options';
  if (!isOptionsObject(path, value)) {
    throw new FerryConfigError(path, `must be an object, got ${received(value)}`);
  }
  return snapshotOptions(prefix, path, value, known, true) as T;
}

/**
 * A record option whose keys are the caller's own names (`routes`, by event type), or options
 * whose other keys are checked later (a NestJS module's settings): checked to be an object and
 * returned as a snapshot of its own keys, and of `inherited` found on its prototype chain, each
 * value read once, as knownKeysOption does. `undefined` passes and is returned.
 */
export function recordOption<T>(prefix: string, value: T, inherited: readonly string[] = []): T {
  if (value === undefined) return value;
  const path = prefix.replace(/\.$/, '') || 'options';
  if (!isOptionsObject(path, value)) {
    throw new FerryConfigError(path, `must be an object, got ${received(value)}`);
  }
  return snapshotOptions(prefix, path, value, inherited, false) as T;
}

/** A non-array object; a revoked Proxy (Array.isArray throws on one) is refused as `path`. */
export function isOptionsObject(path: string, value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  return !readOption(path, 'cannot be read (a revoked Proxy?)', () => Array.isArray(value));
}

/**
 * An object literal or Object.create(null) (no class instance, array or boxed value); one that
 * cannot be read (a revoked Proxy, a getPrototypeOf trap that throws) is refused as `path`.
 */
export function isPlainOptions(path: string, value: unknown): value is Record<string, unknown> {
  if (!isOptionsObject(path, value)) return false;
  const proto = readOption(path, 'cannot be read', () => Object.getPrototypeOf(value) as unknown);
  return proto === Object.prototype || proto === null;
}

/**
 * An array option's copy, each element read once (by index, holes as `undefined`): not an array,
 * or one that cannot be read (a revoked Proxy, a trap that throws), is refused naming `path`:
 * `must be <what>`, as is one longer than `max` (a Proxy's length can claim billions). The
 * elements checked are the elements used.
 */
export function arrayOption(path: string, value: unknown, what: string, max = 10_000): readonly unknown[] {
  const isArray = readOption(path, 'cannot be read (a revoked Proxy?)', () => Array.isArray(value));
  if (!isArray) throw new FerryConfigError(path, `must be ${what}, got ${received(value)}`);
  const array = value as readonly unknown[];
  const length = readOption(path, 'cannot be read', () => array.length);
  if (!Number.isSafeInteger(length) || length > max) {
    throw new FerryConfigError(path, `has a length of ${received(length)}; the limit is ${max}`);
  }
  const copy: unknown[] = [];
  for (let index = 0; index < length; index += 1) {
    copy.push(readOption(`${path}[${index}]`, 'cannot be read', () => array[index]));
  }
  return copy;
}

/** `read()`, or FerryConfigError on `path` saying what threw: never the thrown value itself. */
function readOption<R>(path: string, what: string, read: () => R): R {
  try {
    return read();
  } catch (error) {
    throw new FerryConfigError(path, `${what}: ${thrownText(error)}`);
  }
}

/** What a getter or trap threw, shown as a received value is (redacted, clipped). */
function thrownText(error: unknown): string {
  const message = received(error instanceof Error ? safeMessage(error) : error);
  return `it threw ${message}`;
}

function safeMessage(error: Error): unknown {
  try {
    return String(error.message);
  } catch {
    return undefined;
  }
}

function snapshotOptions(
  prefix: string,
  path: string,
  value: object,
  known: readonly string[],
  refuseUnknown: boolean,
): Record<string, unknown> {
  const own = readOption(path, 'its keys cannot be listed', () => Object.keys(value));
  const snapshot: Record<string, unknown> = {};
  const read = (key: string): unknown =>
    readOption(`${prefix}${key}`, 'cannot be read', () => (value as Record<string, unknown>)[key]);
  for (const key of own) {
    const option = read(key);
    if (refuseUnknown && !known.includes(key)) {
      // A key set to `undefined` is not refused: it has no effect either way, and a configuration
      // loader leaves optional fields it did not find so.
      if (option === undefined) continue;
      throw new FerryConfigError(
        `${prefix}${key}`,
        `is not a known option${renamedHint(prefix, key, known)} (known: ${known.join(', ')})`,
      );
    }
    defineOption(snapshot, key, option);
  }
  for (const key of known) {
    // Inherited: a class instance's prototype getter counts, Object.prototype never does (a
    // polluted prototype is no option of the caller's).
    if (own.includes(key) || Object.hasOwn(Object.prototype, key)) continue;
    const option = read(key);
    if (option !== undefined) defineOption(snapshot, key, option);
  }
  return snapshot;
}

function defineOption(snapshot: Record<string, unknown>, key: string, option: unknown): void {
  Object.defineProperty(snapshot, key, {
    value: option,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * A required options argument (createRelay's config, a connection's, a consumer's): an object,
 * else FerryConfigError naming `options`, what it needs (`needs`, e.g. `db and publisher`) and
 * the value received. Checked before anything is read from it: left out, the first read of one
 * of its options was a TypeError. A revoked Proxy is refused here too, not a TypeError.
 */
export function requiredOptions(value: unknown, needs: string): void {
  if (!isOptionsObject('options', value)) {
    throw new FerryConfigError('options', `must be an object with ${needs}, got ${received(value)}`);
  }
}

/**
 * A required option or argument that is an object with `methods` (a client, a pool, an executor,
 * an inbox): left out, `null`, a connection string or an object without them is refused naming
 * `name` with what it must be (`what`), the methods it lacks and the value received, at
 * construction, not a TypeError at the first call. Returns it.
 */
export function methodsOption<T>(name: string, value: unknown, methods: readonly string[], what: string): T {
  if (typeof value !== 'object' || value === null) {
    throw new FerryConfigError(name, `must be ${what}, got ${received(value)}`);
  }
  const missing = missingMethods(value, methods);
  if (missing !== '') {
    throw new FerryConfigError(name, `must be ${what}, got an object missing ${missing}: ${received(value)}`);
  }
  return value as T;
}

/**
 * Every method ferry calls on a SqlExecutor it is given: the relay, the inbox and migrate use all
 * three, and the others (health, metrics, checkSchema) hand theirs to code that may.
 */
export const EXECUTOR_METHODS = ['query', 'execute', 'transaction'] as const;

/** The `methods` that `value` does not have as functions, as `execute(), transaction()`; '' when none. */
export function missingMethods(value: object, methods: readonly string[]): string {
  return methods
    .filter((method) => typeof (value as Record<string, unknown>)[method] !== 'function')
    .map((method) => `${method}()`)
    .join(', ');
}

/**
 * A required SqlExecutor option (`db`): what fromPrisma, fromPg or fromKysely return, with every
 * method of EXECUTOR_METHODS.
 */
export function executorOption<T>(name: string, value: unknown): T {
  return methodsOption<T>(name, value, EXECUTOR_METHODS, 'a SqlExecutor such as fromPrisma(prisma)');
}

/** A required callback: anything but a function (left out too) is refused naming it. */
export function requiredFunctionOption<T>(name: string, value: T): T {
  if (typeof value !== 'function')
    throw new FerryConfigError(name, `must be a function, got ${received(value)}`);
  return value;
}

/**
 * A key set to `undefined` is not refused: it has no effect either way, and a configuration
 * loader leaves optional fields it did not find so.
 */
function firstUnknownKey(value: object, known: readonly string[]): string | undefined {
  return Object.keys(value).find(
    (key) => !known.includes(key) && (value as Record<string, unknown>)[key] !== undefined,
  );
}

/** `: did you mean dryRun?` for `dryrun` or `dry_run`: a known key but for case and separators. */
export function spellingHint(key: string, known: readonly string[]): string {
  const plain = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');
  const match = known.find((name) => plain(name) === plain(key));
  return match === undefined ? '' : `: did you mean ${match}?`;
}

/**
 * The arguments object of an operator call (`retry(id, { actor, reason, dryRun })`,
 * `list({ status, limit, cursor })`): a key outside `keys` is refused before any statement, with
 * FerryValidationError (FERRY_VALIDATION_FAILED, `field` the key as written), as every other
 * invalid argument of the admin methods is. Ignored, a misspelt `dryrun: true` would run the real
 * action. `method` names the call in the message; `undefined` (the argument left out) passes.
 */
export function knownKeysArgument(
  method: string,
  value: unknown,
  keys: Readonly<Record<string, true>>,
): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || readable(method, () => Array.isArray(value))) {
    throw new FerryValidationError(method, `its arguments must be an object, got ${received(value)}`);
  }
  const known = Object.keys(keys);
  const key = readable(method, () => firstUnknownKey(value, known));
  if (key !== undefined) {
    throw new FerryValidationError(
      key,
      `is not an argument of ${method} (known: ${known.join(', ')})${spellingHint(key, known)}`,
    );
  }
}

/** An optional boolean call argument (`dryRun`, `force`): `undefined` passes, `"true"` does not. */
export function booleanArgument(name: string, value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new FerryValidationError(name, `must be a boolean, got ${received(value)}`);
  }
  return value;
}

/**
 * The arguments object of a call that has no default for it (`purgeSent({ before })`,
 * `requeue({ id, ... })`): left out, `null` or not an object, refused naming `method` and
 * showing the value, then checked as knownKeysArgument. Returns it for field access.
 */
export function requiredArgument(
  method: string,
  value: unknown,
  keys: Readonly<Record<string, true>>,
): Readonly<Record<string, unknown>> {
  if (value === undefined) {
    throw new FerryValidationError(method, `its arguments must be an object, got ${received(value)}`);
  }
  knownKeysArgument(method, value, keys);
  return value as Readonly<Record<string, unknown>>;
}

/** An integer call argument from `min` to `max` (`limit`); `undefined` is `fallback` when one is given. */
export function integerArgument(
  name: string,
  value: unknown,
  min: number,
  max: number,
  fallback?: number,
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FerryValidationError(
      name,
      `must be an integer between ${min} and ${max}, got ${received(value)}`,
    );
  }
  return value;
}

/**
 * The instants a Date argument may name: years 1 to 9999 (UTC). JavaScript's Dates reach 271821 BC
 * and 275760 AD; outside 0001-9999 their ISO form (`-004713-...`, `+010000-...`, how Prisma sends a
 * Date) is refused by PostgreSQL's parser, so one bound holds for every executor.
 */
const EARLIEST_DATE_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
const LATEST_DATE_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
/** [EARLIEST_DATE_MS, LATEST_DATE_MS]: a tool turning an age into a Date checks it up front (the CLI). */
export const DATE_ARGUMENT_BOUNDS = [EARLIEST_DATE_MS, LATEST_DATE_MS] as const;

/**
 * A Date call argument (`before`, `createdBefore`, `since`): a string, an invalid Date, an object
 * that only inherits from Date and a Date outside years 1 to 9999 are refused, never parsed.
 * Returns a plain Date of the argument's instant, the only value to use from then on: the
 * argument's own methods (a subclass's `toISOString`, as a date library may ship) are never called
 * again, so the statements, the audit row and the cursor carry the instant that was checked, not a
 * text such as 'infinity' (review 70: a purge before it deleted rows published now).
 */
export function dateArgument(name: string, value: unknown): Date {
  const time = readable(name, () => (value instanceof Date ? Date.prototype.getTime.call(value) : NaN));
  if (Number.isNaN(time) || time < EARLIEST_DATE_MS || time > LATEST_DATE_MS) {
    throw new FerryValidationError(
      name,
      `must be a valid Date from 0001-01-01 to 9999-12-31 (UTC), got ${received(value)}`,
    );
  }
  return new Date(time);
}

/**
 * Reads an argument with `read`; a value that throws while it is read (a revoked proxy, a Date
 * look-alike whose methods refuse it) is refused as the argument `name`, not a TypeError.
 */
function readable<T>(name: string, read: () => T): T {
  try {
    return read();
  } catch {
    throw new FerryValidationError(name, 'cannot be read (a revoked proxy or an object whose methods throw)');
  }
}

/** A string call argument (a filter, a cursor): any string, never a number turned into one. */
export function stringArgument(name: string, value: unknown): string {
  if (typeof value !== 'string')
    throw new FerryValidationError(name, `must be a string, got ${received(value)}`);
  return value;
}

/**
 * An optional filter of an admin listing (`type`, `key`, `actor`, …): absent is null; given, a
 * string PostgreSQL can hold (assertText): a NUL reached it as its own error, and an unpaired
 * surrogate, sent as U+FFFD, silently matched another value (review 35).
 */
export function optionalTextFilter(name: string, value: unknown): string | null {
  if (value === undefined) return null;
  const text = stringArgument(name, value);
  assertText(name, text);
  return text;
}

/** A text call argument stored as given (`actor`, `reason`): non-empty, at most `maxLength`, storable. */
export function textArgument(name: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > maxLength) {
    throw new FerryValidationError(
      name,
      `must be a non-empty string of at most ${maxLength} characters, got ${received(value)}`,
    );
  }
  assertText(name, value);
  return value;
}

/** A UUID call argument (a record id, a claim token, a request id). */
export function uuidArgument(name: string, value: unknown): string {
  if (!isUuid(value)) {
    throw new FerryValidationError(name, `must be a UUID, got ${received(value)}`);
  }
  return value;
}

/**
 * The length of the array argument `value`, read once, before any element: a safe integer from
 * 0 to `max`, else FerryValidationError on `name` (`what` names the elements: `has 1000000000
 * inputs; the limit is 10000`). A Proxy's `length` can be anything or throw; a sparse array or
 * a Proxy claiming a length in the billions, read index by index, exhausted the memory.
 */
export function arrayLengthArgument(
  name: string,
  value: readonly unknown[],
  max: number,
  what: string,
): number {
  let length: unknown;
  try {
    length = value.length;
  } catch {
    throw new FerryValidationError(name, 'its length could not be read (it threw)');
  }
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
    throw new FerryValidationError(name, `has a length that is no array length, got ${received(length)}`);
  }
  if (length > max) throw new FerryValidationError(name, `has ${length} ${what}; the limit is ${max}`);
  return length;
}

/** A list of 1 to `max` UUIDs (`retryMany(ids)`): an element refused names its index, `ids[1]`. */
export function uuidListArgument(name: string, value: unknown, max: number): readonly string[] {
  // The length read once (arrayLengthArgument): a Proxy's could throw, or answer 1.5.
  const length = Array.isArray(value)
    ? arrayLengthArgument(name, value, Number.MAX_SAFE_INTEGER, 'UUIDs')
    : 0;
  if (!Array.isArray(value) || length < 1 || length > max) {
    throw new FerryValidationError(name, `must be an array of 1 to ${max} UUIDs, got ${received(value)}`);
  }
  // Every index, holes too: forEach skips a hole, so [id, , id] passed. The ids checked are the
  // ids returned (a copy): the caller's array is not read again.
  const ids: string[] = [];
  for (let index = 0; index < length; index += 1) ids.push(uuidArgument(`${name}[${index}]`, value[index]));
  return ids;
}

/** One of `allowed` (a status filter); `undefined` passes. */
export function oneOfArgument<T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  if (value !== undefined && !allowed.includes(value as T)) {
    throw new FerryValidationError(name, `must be one of ${allowed.join(', ')}, got ${received(value)}`);
  }
  return value as T | undefined;
}

export function integerOption(
  name: string,
  value: unknown,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new FerryConfigError(name, `must be an integer between ${min} and ${max}, got ${received(value)}`);
  }
  return value;
}

/** The longest delay a Node timer holds: past it, setTimeout (and a deadline made with it) fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A timeout, interval or delay in ms that goes into a timer (setTimeout, deadlineSignal): an
 * integer from `min` to MAX_TIMER_MS, else FerryConfigError.
 */
export function timerOption(name: string, value: unknown, min: number): number {
  return integerOption(name, value, min, MAX_TIMER_MS);
}

export function nonEmptyOption(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new FerryConfigError(name, `must be a non-empty string, got ${received(value)}`);
  }
  return value;
}

export function booleanOption(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean')
    throw new FerryConfigError(name, `must be a boolean, got ${received(value)}`);
  return value;
}

export function oneOfOption<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw new FerryConfigError(name, `must be one of ${allowed.join(', ')}, got ${received(value)}`);
  }
  return value as T;
}

/** `undefined` passes (optional callbacks); anything else must be a function. */
export function functionOption<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') {
    throw new FerryConfigError(name, `must be a function, got ${received(value)}`);
  }
  return value;
}
