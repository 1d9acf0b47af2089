/**
 * Where a sensitive key's value ends when a RegExp cannot say it (keyValue.ts): a JSON or YAML
 * flow value (`[…]`, `{…}`) to its balanced closing bracket, a YAML block scalar (`password: |`)
 * to its last indented line, a Cookie header to its last cookie. Each scan reads forward from the
 * value's start once, and the key rule goes on after the value's end, so the text is read a
 * constant number of times whatever it holds (linear: boundedTime.test.ts); looking back, for a
 * key's indentation, reads at most MAX_LOOK_BACK characters.
 */

const BACKSLASH = 92;
const MAX_LOOK_BACK = 256;

/**
 * The end (exclusive) of the bracketed value opening at `start` (`[` or `{`), brackets inside
 * quoted strings not counted; a string's quote closes it after the backslashes that opened it,
 * plus any number of its own escaped backslashes (JSON embedded in JSON strings: see CLOSER in
 * keyValue.ts). Undefined when it never closes: the value then runs to the end of the text.
 */
function bracketedEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let quote = '';
  let level = 0;
  for (let i = start; i < text.length; i += 1) {
    let run = 0;
    while (text.charCodeAt(i) === BACKSLASH) {
      run += 1;
      i += 1;
    }
    const c = text.charAt(i);
    if (quote === '') {
      if (c === '"' || c === "'") [quote, level] = [c, run];
      else if (c === '[' || c === '{') depth += 1;
      else if ((c === ']' || c === '}') && --depth === 0) return i + 1;
    } else if (c === quote && run >= level && (run - level) % (2 * (level + 1)) === 0) quote = '';
  }
  return undefined;
}

/** What may follow a bracketed value and still be part of it (`[a]b`), not what closes around it. */
const GLUED = /[^\s"'`“”„«»‘’‚‹›,;&)\]}]*/y;

/**
 * The end of a bracketed value opening at `start` with the characters glued after its closing
 * bracket (`[redacted-aws-key]/20261202/…`, what an earlier rule left); undefined as bracketedEnd.
 */
export function bracketedValueEnd(text: string, start: number): number | undefined {
  const end = bracketedEnd(text, start);
  if (end === undefined) return undefined;
  GLUED.lastIndex = end;
  GLUED.exec(text);
  return GLUED.lastIndex;
}

/**
 * The indentation of the line `at` stands on (spaces, tabs and a list's `- `), when its start is
 * at most MAX_LOOK_BACK characters back; else 0.
 */
function indentationAt(text: string, at: number): number {
  let start = at;
  while (start > 0 && at - start < MAX_LOOK_BACK && text.charAt(start - 1) !== '\n') start -= 1;
  if (start > 0 && text.charAt(start - 1) !== '\n') return 0;
  let end = start;
  while (end < at && /[ \t-]/.test(text.charAt(end))) end += 1;
  return end - start;
}

/** A line's own indentation, or undefined for a blank line. */
function lineIndentation(line: string): number | undefined {
  const indent = line.search(/[^ \t\r]/);
  return indent < 0 ? undefined : indent;
}

/**
 * The end of a YAML block scalar whose indicator (`|`, `>-`, …) ends at `from`, for a key at
 * `keyAt`: the lines after it indented deeper than the key's line (blank lines among them).
 * When text other than a comment follows the indicator on its line (a text whose lines were
 * joined into one), the value is the word after the indicator.
 */
export function blockScalarEnd(text: string, from: number, keyAt: number): number {
  const lineEnd = text.indexOf('\n', from);
  const rest = text.slice(from, lineEnd < 0 ? text.length : lineEnd);
  if (lineEnd < 0 || !/^[ \t\r]*(?:#.*)?$/.test(rest)) {
    const word = /[^\S\n]*[^\s,;&]*/y;
    word.lastIndex = from;
    word.exec(text);
    return word.lastIndex;
  }
  const keyIndent = indentationAt(text, keyAt);
  let end = from;
  let next = lineEnd + 1;
  while (next <= text.length) {
    const close = text.indexOf('\n', next);
    const stop = close < 0 ? text.length : close;
    const indent = lineIndentation(text.slice(next, stop));
    if (indent !== undefined && indent <= keyIndent) break;
    if (indent !== undefined) end = stop;
    if (close < 0) break;
    next = close + 1;
  }
  return end;
}

/** The next `; name=value` of a Cookie header, read where the one before ended. */
const NEXT_COOKIE = /;[^\S\n]*[^\s;,="'`]{1,128}=[^\s;,"'`]*/y;

/** The end of a Cookie (or Set-Cookie) header's value whose first cookie ends at `from`. */
export function cookiesEnd(text: string, from: number): number {
  let end = from;
  NEXT_COOKIE.lastIndex = end;
  while (NEXT_COOKIE.test(text)) end = NEXT_COOKIE.lastIndex;
  return end;
}
