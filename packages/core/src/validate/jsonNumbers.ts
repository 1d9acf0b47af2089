import { numberFault, storedNumberFault } from './numbers';
import { pathSegment } from './text';

/**
 * Text that may hold a number JavaScript cannot keep (numberFault), so most bodies are never
 * scanned: a value (after `:`, `,` or `[`) that is a number of 16 or more digits in a row, one
 * whose first 16 digits are split by its point with an exponent of at least 0
 * (`1234567.890123456789e11`), a negative zero, or a number with an exponent of 3 or more digits; or
 * a fraction of 200 or more digits. A number with none of these is a safe integer, or a float
 * neither Infinity nor rounded to 0, and below 2^53 or of at most 15 significant digits, which
 * JavaScript writes back as the very value written (beyond 2^53 a float needs 16 integer digits in
 * a row, 17 with a negative exponent, or an exponent of at least 0): at most 15 integer digits and
 * an exponent of at most 99 stay below 1e115, and a fraction of at most 199 digits with an exponent
 * of at least -99 stays above 1e-299 (the smallest double is about 4.9e-324: 0.<224 zeros>1e-99
 * becomes 0, and a 300-digit bound missed it). A digest, UUID or long id sent as a string
 * (`"3e123…"`, `"…-0abc…"`) does not match.
 */
const MAYBE_INEXACT =
  /[:,[]\s*(?:-?\d{16}|-?(?=(?:\d\.?){15}\d)\d+\.\d+[eE]\+?\d|-0(?:\.0+)?(?![\d.])|-?\d+(?:\.\d+)?[eE][+-]?\d{3})|\.\d{200}/;

/** Whether `json` may hold a number JavaScript cannot keep (MAYBE_INEXACT); false: it holds none. */
export function mayHoldInexactNumber(json: string): boolean {
  return MAYBE_INEXACT.test(json);
}

/**
 * A value (after `:`, `,` or `[`) that may be a float of 2^53 or more: 16 or more integer digits
 * before a point or an exponent, or an exponent of at least 0 (`1e16`, `1.5E17`). Such a float has
 * one or the other: without an exponent it needs 16 integer digits, with a negative one 17.
 */
const MAYBE_LARGE_FLOAT = /[:,[]\s*-?(?:\d{16,}[.eE]|\d+(?:\.\d+)?[eE]\+?\d)/;

/**
 * Whether `json` may hold a float whose value is 2^53 or more (MAYBE_LARGE_FLOAT); false: every
 * number of it read by JSON.parse is below 2^53 or an integer written in digits.
 */
export function mayHoldLargeFloat(json: string): boolean {
  return MAYBE_LARGE_FLOAT.test(json);
}

const STRING = /"(?:[^"\\]+|\\.)*"/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

interface Frame {
  readonly array: boolean;
  /** An object's current key, as its JSON string token. */
  key: string;
  /** An array's current index. */
  index: number;
}

/**
 * The first number of `json` (text JSON.parse has accepted) that JSON.parse would change
 * (numberFault) and where, e.g. `integer beyond 2^53-1 at $.id, ...`, or null.
 */
export function inexactNumberFault(json: string): string | null {
  return mayHoldInexactNumber(json) ? scanNumbers(json) : null;
}

/**
 * inexactNumberFault for jsonb text as PostgreSQL writes it (storedNumberFault): a float emit()
 * accepted at 1e21 or above comes back in plain digits and is no fault.
 */
export function inexactStoredNumberFault(json: string): string | null {
  return scanStoredNumbers(json).fault;
}

/** What reading jsonb text for inexact numbers found (scanStoredNumbers). */
export interface StoredNumberScan {
  /** Whether the text may hold a number JavaScript cannot keep (mayHoldInexactNumber), so was scanned. */
  readonly scanned: boolean;
  /** inexactStoredNumberFault's answer; null when not scanned. */
  readonly fault: string | null;
}

const NOT_SCANNED: StoredNumberScan = { scanned: false, fault: null };

/**
 * inexactStoredNumberFault, telling also whether the text was scanned: a caller that needs both
 * answers (the relay: noteInexactNumbers, notePayloadText) runs MAYBE_INEXACT once.
 */
export function scanStoredNumbers(json: string): StoredNumberScan {
  if (!mayHoldInexactNumber(json)) return NOT_SCANNED;
  return { scanned: true, fault: scanNumbers(json, storedNumberFault) };
}

/** inexactNumberFault without the MAYBE_INEXACT shortcut: every number token is checked. */
export function scanNumbers(json: string, fault: typeof numberFault = numberFault): string | null {
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < json.length;) {
    const char = json[i]!;
    const top = stack[stack.length - 1];
    if (char === '"') {
      STRING.lastIndex = i;
      const token = STRING.exec(json)![0];
      if (expectKey && top !== undefined) top.key = token;
      expectKey = false;
      i += token.length;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(json)![0];
      const value = Number(token);
      if (fault(value, token) !== null) return fault(value, token, ` at ${pathOf(stack)}`);
      i += token.length;
    } else {
      if (char === '{' || char === '[') stack.push({ array: char === '[', key: '', index: 0 });
      else if (char === '}' || char === ']') stack.pop();
      else if (char === ',' && top !== undefined) {
        if (top.array) top.index += 1;
        else expectKey = true;
      }
      if (char === '{') expectKey = true;
      i += 1;
    }
  }
  return null;
}

function pathOf(stack: readonly Frame[]): string {
  let path = '$';
  for (const frame of stack) {
    path += frame.array ? `[${frame.index}]` : `.${pathSegment(JSON.parse(frame.key) as string)}`;
  }
  return path;
}
