import type { JsonMember, NumberRule } from './json';
import { mayHoldLargeFloat } from './jsonNumbers';
import { valueNumberFault } from './numbers';

/** The floats beyond 2^53-1 one parsed body held: by the object or array holding each, by its key or index there. */
type HeldFloats = WeakMap<object, ReadonlyMap<string | number, number>>;

/**
 * The floats beyond 2^53-1 each payload parseJsonObjectBody made held (1.5e17, as Python and Java
 * write a large double), by the object or array of the payload holding each and its key or index
 * there. Keyed on the payload object: a copy of one, a payload wrapping one, or any object an
 * application builds has none; a number an application puts into one has none either, unless it
 * is the very value the body held, held where the body held it (that very object or array, under
 * that key or index). No path string is built: building one for every value of a body of
 * hundreds of thousands of floats under 64 levels of long keys took seconds (review 96).
 */
const parsedFloats = new WeakMap<object, HeldFloats>();

/**
 * Records where `payload`, which JSON.parse read from `json` (whose numbers parseJsonObjectBody
 * scanned: inexactNumberFault), holds an integer beyond 2^53-1; returns `payload`. The scan refused
 * every such integer written as digits and every float that does not print back as itself, so
 * each one left was written as a float JavaScript keeps exactly. Only text that may hold such a
 * float (mayHoldLargeFloat) is walked; the walk reads each value once, in time linear in them.
 */
export function noteParsedBody<T extends object>(payload: T, json: string): T {
  if (!mayHoldLargeFloat(json)) return payload;
  const found: HeldFloats = new WeakMap();
  let any = false;
  const stack: unknown[] = [payload];
  for (let value = stack.pop(); value !== undefined; value = stack.pop()) {
    if (typeof value !== 'object' || value === null) continue;
    let held: Map<string | number, number> | undefined;
    const note = (key: string | number, child: unknown): void => {
      if (typeof child === 'number') {
        if (!Number.isInteger(child) || Number.isSafeInteger(child)) return;
        held ??= new Map();
        held.set(key, child);
      } else if (typeof child === 'object' && child !== null) {
        stack.push(child);
      }
    };
    if (Array.isArray(value)) value.forEach((child: unknown, index) => note(index, child));
    else for (const [key, child] of Object.entries(value)) note(key, child);
    if (held !== undefined) {
      found.set(value, held);
      any = true;
    }
  }
  if (any) parsedFloats.set(payload, found);
  return payload;
}

/**
 * The number rule acceptance holds `payload` to (under the root `payload`): valueNumberFault (an
 * application's value: 2 ** 53 may be a rounded result, and it cannot be known to be a float), but
 * a number held where the body parseJsonObjectBody made `payload` from held a float beyond 2^53-1
 * (noteParsedBody: the same object or array, key or index), with that very value, is kept.
 */
export function payloadNumberRule(payload: unknown): NumberRule {
  const floats = typeof payload === 'object' && payload !== null ? parsedFloats.get(payload) : undefined;
  if (floats === undefined) return valueNumberFault;
  return (value, _path, member: JsonMember | null) => {
    const fault = valueNumberFault(value);
    if (fault === null || member === null) return fault;
    return floats.get(member.container)?.get(member.key) === value ? null : fault;
  };
}
