import { FerryValidationError } from '../errors';

/**
 * Text that PostgreSQL cannot store faithfully: NUL is refused by text (22021) and jsonb
 * (22P05) alike, and an unpaired UTF-16 surrogate is either refused (a jsonb `\ud800` escape)
 * or silently replaced by U+FFFD on the way to a text column. emit and acceptance refuse both
 * before any SQL runs (reason `invalid_text`).
 */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `value` cannot be stored as text, or null when it can. */
export function textFault(value: string): string | null {
  if (value.includes('\u0000')) return 'contains a NUL character';
  if (UNPAIRED_SURROGATE.test(value)) return 'contains an unpaired UTF-16 surrogate';
  return null;
}

/**
 * `value` as text PostgreSQL stores unchanged (for error texts ferry stores, e.g. last_error):
 * NUL, which PostgreSQL refuses (a statement storing it would fail), and unpaired surrogates,
 * which it would turn into U+FFFD itself, are replaced with U+FFFD.
 */
export function storableText(value: string): string {
  if (textFault(value) === null) return value;
  return value.replaceAll('\u0000', '\ufffd').replace(new RegExp(UNPAIRED_SURROGATE.source, 'g'), '\ufffd');
}

/** C0 control characters but NUL (textFault's, refused as `invalid_text`), DEL and C1. */
// eslint-disable-next-line no-control-regex -- finding control characters is its purpose
const CONTROL = /[\u0001-\u001f\u007f-\u009f]/;
/** Unicode's line and paragraph separators: a line break in a log line or a header as \n is. */
const LINE_BREAK = /[\u2028\u2029]/;
/**
 * Characters that show nothing: whitespace, format characters (zero-width space and joiners,
 * BOM, soft hyphen, tags), the other default-ignorable ones (Hangul fillers) and the blank
 * braille pattern (U+2800, the usual "invisible name").
 */
const INVISIBLE = /^[\p{White_Space}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]+$/u;
/**
 * Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder
 * how the id and whatever follows it on a log line or in a list display (`order-\u202E1-tnuocca`
 * shows as another id). The marks (U+200E, U+200F, U+061C) only steer neutral characters: kept.
 */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * Why `value` cannot be a message id (or tenant id), or null: an id that is empty, shows
 * nothing (only whitespace, zero-width or other invisible characters), or holds a control
 * character (C0, DEL, C1), a line break (U+2028, U+2029) or a bidirectional control names
 * nothing a person can tell apart, type or find in a log. Invisible characters between visible ones (an emoji's joiner,
 * a right-to-left mark) are kept. NUL is left to textFault.
 */
export function identifierFault(value: string): string | null {
  if (value.trim().length === 0)
    return value.length === 0 ? 'must not be empty' : 'must not be only whitespace';
  if (INVISIBLE.test(value)) return `must not be only invisible characters (${codePoints(value)})`;
  const control = CONTROL.exec(value);
  if (control !== null) return `must not contain a control character (${codePoints(control[0])})`;
  const lineBreak = LINE_BREAK.exec(value);
  if (lineBreak !== null) return `must not contain a line break (${codePoints(lineBreak[0])})`;
  const bidi = BIDI_CONTROL.exec(value);
  if (bidi !== null) return `must not contain a bidirectional control (${codePoints(bidi[0])})`;
  return null;
}

/** NUL and every character identifierFault refuses as a control, line break or bidirectional control. */
const UNSHOWABLE = new RegExp(`\\u0000|${CONTROL.source}|${LINE_BREAK.source}|${BIDI_CONTROL.source}`, 'g');

/**
 * `text` for a terminal or a line-oriented output: NUL, the other C0 controls, DEL, C1, the line
 * and paragraph separators and the bidirectional controls (what identifierFault refuses in an
 * id) written as `\uXXXX`, so a value stays on its line and drives no terminal. Nothing else
 * changes (a backslash stays one).
 */
export function escapeUnshowable(text: string): string {
  return text.replace(UNSHOWABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `U+200B U+200D`: the code points of `text`, the first eight. */
function codePoints(text: string): string {
  const points = Array.from(
    text,
    (c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
  );
  return points.length > 8 ? `${points.slice(0, 8).join(' ')} …` : points.join(' ');
}

const MAX_SEGMENT = 64;

/**
 * A key as it may appear in an error's field path: NUL and unpaired surrogates escaped (so
 * the path itself is valid text for logs, headers and SQS attributes), cut to 64 characters.
 */
export function pathSegment(key: string): string {
  const safe = textFault(key) === null ? key : JSON.stringify(key).slice(1, -1);
  return safe.length > MAX_SEGMENT ? `${safe.slice(0, MAX_SEGMENT)}…` : safe;
}

/** Throws FerryValidationError (rule `invalid_text`) naming `field` when `value` cannot be stored as text. */
export function assertText(field: string, value: string): void {
  const fault = textFault(value);
  if (fault !== null) throw new FerryValidationError(field, fault, 'FERRY_VALIDATION_FAILED', 'invalid_text');
}

/**
 * Throws FerryValidationError naming `field` when `value` cannot be an identifier (identifierFault,
 * the rule of tenant and message ids): an admin's tenant scope, for one.
 */
export function assertIdentifier(field: string, value: string): void {
  const fault = identifierFault(value);
  if (fault !== null) throw new FerryValidationError(field, fault);
}
