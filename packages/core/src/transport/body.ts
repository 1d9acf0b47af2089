import { inexactNumberFault } from '../validate/jsonNumbers';
import { noteParsedBody } from '../validate/parsedBodies';
import { strictUtf8Text } from './utf8';

export type JsonBody =
  | { readonly ok: true; readonly payload: Record<string, unknown> }
  | { readonly ok: false; readonly detail: string };

/**
 * Parses a message body that must be a JSON object (a leading byte order mark left out); `detail`
 * says why it is not one. A body
 * with a number JSON.parse would change (an integer beyond 2^53-1, 1e400, 1e-400, -0:
 * numberFault) is refused too, naming where it is: it is never accepted as a different value.
 * So is a float beyond 2^53-1 that JavaScript does not write back as the value the body wrote
 * (`1.23456789012345678E+18`, as Jackson writes a BigDecimal, reads as 1234567890123456800).
 * Where the payload holds the floats beyond 2^53-1 it keeps (1.5e17, as Python and Java write a
 * large double) is recorded (noteParsedBody): acceptance keeps those very values at those paths,
 * and refuses an integer beyond 2^53-1 an application puts anywhere, as in any value of its own.
 */
export function parseJsonObjectBody(body: string): JsonBody {
  // A leading byte order mark is not part of the JSON text, whichever way the body came (bytes,
  // or text as SQS gives it: its consumer dead-lettered what the others accepted, review 47).
  const text = body.startsWith('\uFEFF') ? body.slice(1) : body;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    return { ok: false, detail: `body is not JSON: ${(error as Error).message}` };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { ok: false, detail: 'body is JSON but not an object' };
  }
  const inexact = inexactNumberFault(text);
  if (inexact !== null) return { ok: false, detail: inexact };
  return { ok: true, payload: noteParsedBody(payload as Record<string, unknown>, text) };
}

/**
 * Parses a message body given as bytes: it must be valid UTF-8 (never silently turned into
 * U+FFFD replacement characters) holding a JSON object.
 */
export function parseJsonObjectBytes(bytes: Uint8Array): JsonBody {
  const text = strictUtf8Text(bytes);
  if (text === undefined) return { ok: false, detail: 'body is not valid UTF-8' };
  return parseJsonObjectBody(text);
}
