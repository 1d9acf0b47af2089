import { jsonMemberPath, type NumberRule } from './json';
import { mayHoldLargeFloat } from './jsonNumbers';
import { valueNumberFault } from './numbers';

/**
 * The floats beyond 2^53-1 each payload parseJsonObjectBody made held (1.5e17, as Python and Java
 * write a large double), by where acceptance's jsonFault names them (`payload.a.b[2]`) and their
 * value. Keyed on the payload object: a copy of one, a payload wrapping one, or any object an
 * application builds has none; a number an application puts into one has none either, unless it
 * is the very value the body held at that very path.
 */
const parsedFloats = new WeakMap<object, ReadonlyMap<string, number>>();

/**
 * Records where `payload`, which JSON.parse read from `json` (whose numbers parseJsonObjectBody
 * scanned: inexactNumberFault), holds an integer beyond 2^53-1; returns `payload`. The scan refused
 * every such integer written as digits and every float that does not print back as itself, so
 * each one left was written as a float JavaScript keeps exactly. Only text that may hold such a
 * float (mayHoldLargeFloat) is walked.
 */
export function noteParsedBody<T extends object>(payload: T, json: string): T {
  if (!mayHoldLargeFloat(json)) return payload;
  const found = new Map<string, number>();
  const stack: Array<{ value: unknown; path: string }> = [{ value: payload, path: 'payload' }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path } = item;
    if (typeof value === 'number') {
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) found.set(path, value);
    } else if (Array.isArray(value)) {
      value.forEach((child: unknown, index) =>
        stack.push({ value: child, path: jsonMemberPath(path, index) }),
      );
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value))
        stack.push({ value: child, path: jsonMemberPath(path, key) });
    }
  }
  if (found.size > 0) parsedFloats.set(payload, found);
  return payload;
}

/**
 * The number rule acceptance holds `payload` to (under the root `payload`): valueNumberFault (an
 * application's value: 2 ** 53 may be a rounded result, and it cannot be known to be a float), but
 * a number at a path where the body parseJsonObjectBody made `payload` from held a float beyond
 * 2^53-1 (noteParsedBody), with that very value, is kept.
 */
export function payloadNumberRule(payload: unknown): NumberRule {
  const floats = typeof payload === 'object' && payload !== null ? parsedFloats.get(payload) : undefined;
  if (floats === undefined) return valueNumberFault;
  return (value, path) => {
    const fault = valueNumberFault(value);
    return fault === null || floats.get(path()) === value ? null : fault;
  };
}
