import { numberFault } from './numbers';
import { pathSegment } from './text';

/**
 * Text that may hold a number JavaScript cannot keep (numberFault): 16 or more digits in a row,
 * an exponent of 3 or more digits, or a negative zero. An integer of at most 15 digits is safe,
 * and a number without 16 digits in a row and with an exponent below 100 is neither Infinity
 * nor rounded to 0, so most bodies are never scanned.
 */
const MAYBE_INEXACT = /\d{16}|[eE][+-]?\d{3}|-0(?:\.0+)?(?![\d.])/;

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
  return MAYBE_INEXACT.test(json) ? scanNumbers(json) : null;
}

/** inexactNumberFault without the MAYBE_INEXACT shortcut: every number token is checked. */
export function scanNumbers(json: string): string | null {
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
      if (numberFault(value, token) !== null) return numberFault(value, token, ` at ${pathOf(stack)}`);
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
