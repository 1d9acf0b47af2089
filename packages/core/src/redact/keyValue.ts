import { blockScalarEnd, bracketedValueEnd, cookiesEnd } from './valueExtent';

/**
 * The grammar of a sensitive key's value (`password=hunter2`, `"token": "a b"`), for the key rule
 * of redact.ts. Every scan here is linear: each one stops at the first character that can end it,
 * and one that fails is followed by the unclosed branch, which takes the rest of the text
 * (boundedTime.test.ts).
 */

/** Every quote a value may open with: ASCII ", ', ` and the typographic ones. */
const ANY_QUOTE = '["\'`“”„«»‘’‚‹›]';

/**
 * The backslashes before a quote of JSON embedded in JSON strings: 1 for `{\"a\":\"b\"}`, 3 one
 * level deeper, 2ⁿ − 1 at level n; 31 is level 5.
 */
const ESCAPES = String.raw`\\{0,31}`;

/** A quote written as a JSON escape (`\u0022`, `\u0027`), itself escaped in JSON strings. */
const UNICODE_QUOTE = String.raw`\\{1,31}u00(?:22|27)`;

/**
 * A value in quotes written as JSON escapes, to the same escape again, else to the end of the
 * text (never a failed scan that the next key would repeat).
 */
const UNICODE_QUOTED = String.raw`(?<uq>${UNICODE_QUOTE})(?:(?!\k<uq>)[\s\S])*(?:\k<uq>|$)`;

/**
 * `key=value`, `key: value`, `key := value`, `key => value`, `key is value`, `key was value`,
 * `key to value`, a quoted value after a space (`invalid token "abc"`, `password 'hunter2'
 * rejected`: a value an error quotes is one it shows, review 155; not JSON.parse's `Unexpected
 * token '}'`, which names the character a body broke at), percent-encoded (`key%3Dvalue`, a query string inside a URL's parameter), also
 * quoted (`"key":"value"`, `“key”: “value”`) and escaped (`\"key\":\"value\"`,
 * `\u0022key\u0022:\u0022value\u0022`); the key may
 * go on for up to 64 more name characters (`password_hash`): bounded, so that a key named again
 * and again in one long word is not followed to the word's end from each place.
 */
const NAME_AND_SEPARATOR = String.raw`(?<rest>[a-z0-9_-]{0,64})(?<separator>(?:${UNICODE_QUOTE}|${ESCAPES}${ANY_QUOTE}?)\s*(?:=>|:=|%(?:25)?3D|[:=])\s*|\s+(?:is|was|to)\s+|\s+(?=${ANY_QUOTE})(?<!unexpected\s+token\s+))`;

/**
 * The closing quote of a value opened by the backslashes `b` and the ASCII quote `q`: `b` and
 * `q` after an even number of the value's own escaped backslashes (each one `b\` twice at that
 * level: `"a\\"` closes, `"a\"` does not).
 */
const CLOSER = String.raw`(?:\k<b>\\\k<b>\\)*\k<b>\k<q>`;

/**
 * A value in ASCII quotes, to its closing quote, across lines: escapes (`\"`, `\\`, `\u00e9`, a
 * deeper level's `\\\"`) and the quote doubled (SQL's `'it''s'`) are part of it. Each token
 * starts where the one before ended (a run of backslashes is read whole, with the character after
 * it): the closer is found at the first place it can be.
 */
const ASCII_QUOTED = String.raw`(?!')(?<b>${ESCAPES})(?<q>["'\x60])(?:\k<b>\k<q>\k<b>\k<q>|(?!${CLOSER})\\+[^\\]|(?!\k<b>\k<q>)[^\\])*${CLOSER}(?!\k<b>\k<q>)`;

/**
 * A value in plain single quotes, read as ASCII_QUOTED reads the others (which leaves it to this
 * one), except that a ' before a letter or digit is an apostrophe (`'it's mine'`), not the closing
 * quote: an English passphrase in single quotes is taken whole.
 */
const SINGLE_QUOTED = String.raw`(?<apostrophe>')(?:''|\\[\s\S]|[^'\\]|'(?=[a-z0-9]))*'(?![a-z0-9'])`;

/** A value in typographic double quotes or guillemets (“…”, „…“, «…», »…«), to the first closing one. */
const TYPOGRAPHIC_DOUBLE = '(?<double>[“”„«»])[^“”«»]*[“”«»]';

/**
 * A value in typographic single quotes (‘…’, ‚…‘, ‹…›): a ’ before a letter or digit is an
 * apostrophe (‘it’s’), not the closing quote.
 */
const TYPOGRAPHIC_SINGLE = '(?<single>[‘’‚‹›])(?:[^‘’‹›]|’(?=[a-z0-9]))*(?:[‘‹›]|’(?![a-z0-9]))';

/**
 * A quote that does not close (a text cut short): the value runs to the end of the text, across
 * lines, whatever the allow-list says (where the value ends is not known, so neither is where the
 * next secret starts).
 */
const UNCLOSED = String.raw`(?<unclosed>${ESCAPES}${ANY_QUOTE})[\s\S]*`;

/**
 * A value in brackets (a JSON array or object, a YAML flow sequence or mapping): matched here by
 * its opening bracket, read to its balanced closing one by bracketedEnd (valueExtent.ts).
 */
const BRACKETED = String.raw`(?<bracket>[[{])`;

/** A YAML block scalar's indicator (`|`, `>-`, `|2+`), its lines read by blockScalarEnd. */
const BLOCK_SCALAR = String.raw`(?<block>[|>][+-]?[1-9]?[+-]?)(?=\s|$)`;

/**
 * Else the value is the run of characters up to a space, a quote, `,`, `;` or `&`; a quote before
 * a letter or digit is part of it (`ab'cd`, an apostrophe or a quote in a generated password).
 */
const UNQUOTED = String.raw`(?<opening>${ESCAPES})(?:[^\s"'\x60“”„«»‘’‚‹›,;&]|${ANY_QUOTE}(?=[a-z0-9]))+`;

/** The key rule for `keys` (alternatives of a RegExp, case-insensitive); group 1 is the key. */
export function keyValuePattern(keys: readonly string[]): RegExp {
  return new RegExp(
    `(${keys.join('|')})${NAME_AND_SEPARATOR}(?:${SINGLE_QUOTED}|${ASCII_QUOTED}|${TYPOGRAPHIC_DOUBLE}|${TYPOGRAPHIC_SINGLE}|${UNICODE_QUOTED}|${UNCLOSED}|${BRACKETED}|${BLOCK_SCALAR}|${UNQUOTED})`,
    'gi',
  );
}

/**
 * One match of the key rule, in parts: `name` (the key and the rest of its name), `head` (the
 * name and the separator), `open` (the opening quote, or the backslashes before a plain value),
 * then a quoted value and its closing quote; `structured` is a value read to its end by
 * valueExtent.ts (brackets, a YAML block scalar, a Cookie header's cookies), `value` all of it.
 */
export type KeyValueMatch =
  | (KeyValueHead & { readonly kind: 'quoted'; readonly value: string; readonly close: string })
  | (KeyValueHead & { readonly kind: 'structured'; readonly value: string })
  | (KeyValueHead & { readonly kind: 'unclosed' })
  | (KeyValueHead & { readonly kind: 'plain' });

interface KeyValueHead {
  readonly name: string;
  readonly head: string;
  readonly open: string;
}

/** The named groups of a match of keyValuePattern. */
interface KeyValueGroups {
  readonly rest: string;
  readonly separator: string;
  readonly b?: string;
  readonly q?: string;
  readonly apostrophe?: string;
  readonly double?: string;
  readonly single?: string;
  readonly uq?: string;
  readonly unclosed?: string;
  readonly bracket?: string;
  readonly block?: string;
  readonly opening?: string;
}

/** Where the value of `found`, a match of keyValuePattern, ends in `text` (undefined: at its end). */
function valueEnd(text: string, found: RegExpExecArray, groups: KeyValueGroups): number | undefined {
  const matchEnd = found.index + found[0].length;
  if (groups.bracket !== undefined) return bracketedValueEnd(text, matchEnd - 1);
  if (groups.block !== undefined) return blockScalarEnd(text, matchEnd, found.index);
  if (groups.opening !== undefined && /cookie$/i.test(`${found[1]}${groups.rest}`))
    return cookiesEnd(text, matchEnd);
  return matchEnd;
}

/**
 * The parts of `match`, a match of keyValuePattern whose key is `key` and named groups `groups`,
 * its value read to its end by the RegExp, by valueEnd (`scanned`), or to the end of the text (`open`).
 */
function keyValueParts(
  match: string,
  key: string,
  groups: KeyValueGroups,
  reach: 'regex' | 'scanned' | 'open',
): KeyValueMatch {
  const name = `${key}${groups.rest}`;
  const head = `${name}${groups.separator}`;
  if (groups.unclosed !== undefined) return { kind: 'unclosed', name, head, open: groups.unclosed };
  if (reach === 'open') return { kind: 'unclosed', name, head, open: groups.bracket ?? '' };
  const value = match.slice(head.length);
  if (reach === 'scanned') return { kind: 'structured', name, head, open: '', value };
  if (groups.uq !== undefined) {
    const closed = value.length >= 2 * groups.uq.length && value.endsWith(groups.uq);
    if (!closed) return { kind: 'unclosed', name, head, open: groups.uq };
    const close = groups.uq;
    return {
      kind: 'quoted',
      name,
      head,
      open: close,
      value: value.slice(close.length, -close.length),
      close,
    };
  }
  const open =
    groups.q !== undefined
      ? `${groups.b ?? ''}${groups.q}`
      : (groups.apostrophe ?? groups.double ?? groups.single);
  if (open === undefined) return { kind: 'plain', name, head, open: groups.opening ?? '' };
  const closeLength = groups.q !== undefined ? open.length : 1;
  return {
    kind: 'quoted',
    name,
    head,
    open,
    value: match.slice(head.length + open.length, match.length - closeLength),
    close: match.slice(match.length - closeLength),
  };
}

/**
 * `text` with every match of `pattern` (keyValuePattern's) replaced by what `replace` makes of it
 * (`at`: where the match starts in `text`). Each value is read to its end (valueEnd), and the next
 * match is looked for from there: the text is read once.
 */
export function replaceKeyValues(
  text: string,
  pattern: RegExp,
  replace: (match: string, parts: KeyValueMatch, at: number) => string,
): string {
  let out = '';
  let last = 0;
  pattern.lastIndex = 0;
  for (let found = pattern.exec(text); found !== null; found = pattern.exec(text)) {
    const groups = found.groups as unknown as KeyValueGroups;
    const end = valueEnd(text, found, groups);
    const stop = end ?? text.length;
    const match = text.slice(found.index, stop);
    const reach = end === undefined ? 'open' : end === found.index + found[0].length ? 'regex' : 'scanned';
    const parts = keyValueParts(match, found[1] ?? '', groups, reach);
    out += text.slice(last, found.index) + replace(match, parts, found.index);
    last = stop;
    // After `replace`, which may have used `pattern` on a part of the value.
    pattern.lastIndex = stop;
    if (stop >= text.length) break;
  }
  return out + text.slice(last);
}
