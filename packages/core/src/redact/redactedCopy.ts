import { setOwnProperty } from '../transport/ownProperty';

/**
 * A Redactor and its sensitive-key rule (redactor.ts), named here so that this file imports nothing
 * but setOwnProperty (which imports nothing).
 */
type Redact = (text: string) => string;
type SensitiveKey = (name: string) => boolean;

/** How deep redactedCopy follows objects (an error, its cause, Prisma's meta.driverAdapterError.cause). */
const MAX_DEPTH = 6;

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `value` with its texts through `redact`, for an error ferry hands on as a cause (a
 * driver's error quotes a row's values: its message, `detail`, `hint`, stack, Prisma's `meta`).
 * An Error stays an Error of the same prototype (instanceof and `name` hold) with every own
 * property; plain objects and arrays are copied the same way, MAX_DEPTH levels deep; strings are
 * redacted; numbers, booleans and the like are kept. A value under a key the sensitive-key rule
 * names (`config.password`, `headers.Authorization`) is replaced whole by '[redacted]', whatever
 * its type (a number, an array, a Buffer, an object). Anything else (a Map, a class instance, what
 * lies deeper, a property whose getter throws) is left out: its text cannot be vouched for.
 */
export function redactedCopy(value: unknown, redact: Redact, sensitiveKey: SensitiveKey, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (depth >= MAX_DEPTH) return undefined;
  if (Array.isArray(value)) return value.map((item) => redactedCopy(item, redact, sensitiveKey, depth + 1));
  const isError = value instanceof Error;
  if (!isError && !isPlainObject(value)) return undefined;
  // A real Error (util.inspect and loggers print it as one), without a stack of its own here.
  const copy: object = isError ? new Error() : {};
  if (isError) delete (copy as { stack?: string }).stack;
  Object.setPrototypeOf(copy, Object.getPrototypeOf(value) as object | null);
  for (const key of Reflect.ownKeys(value)) {
    let item: unknown;
    try {
      item = (value as Record<PropertyKey, unknown>)[key];
    } catch {
      continue;
    }
    const enumerable = Object.getOwnPropertyDescriptor(value, key)?.enumerable ?? true;
    const secret = typeof key === 'string' && item !== undefined && item !== null && sensitiveKey(key);
    const copied = secret ? '[redacted]' : redactedCopy(item, redact, sensitiveKey, depth + 1);
    setOwnProperty(copy as Record<PropertyKey, unknown>, key, copied, enumerable);
  }
  return copy;
}
