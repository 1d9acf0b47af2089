import type { NumberRule } from './json';
import { parsedNumberFault, valueNumberFault } from './numbers';

/**
 * Payload objects parseJsonObjectBody made from a message body whose text it scanned for numbers
 * JSON.parse would change (inexactNumberFault). Identity only: a copy of one, a payload wrapping
 * one, or any object an application builds is not among them.
 */
const parsedBodies = new WeakSet<object>();

/** Remembers `payload` as made from a scanned body (parsedBodies); returns it. */
export function noteParsedBody<T extends object>(payload: T): T {
  parsedBodies.add(payload);
  return payload;
}

/**
 * The number rule acceptance holds `payload` to: parsedNumberFault for a payload parseJsonObjectBody
 * made (its integers beyond 2^53-1 were written as floats: 1.5e17), valueNumberFault for any other
 * (an application's value: 2 ** 53 may be a rounded result, and it cannot be known to be a float).
 */
export function payloadNumberRule(payload: unknown): NumberRule {
  return typeof payload === 'object' && payload !== null && parsedBodies.has(payload)
    ? parsedNumberFault
    : valueNumberFault;
}
