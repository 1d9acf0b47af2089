/**
 * SQL for text that JavaScript bounds: ferry's stored text limits (MAX_STORED_ERROR_CHARS, the
 * relay's 4,000) count UTF-16 code units, as String.length does, while PostgreSQL's left() and
 * char_length() count code points: a character beyond U+FFFF is one to PostgreSQL and two to
 * JavaScript. A text cut in SQL is cut through here, never with left() alone.
 */

/** How many characters beyond U+FFFF `text` holds (4 UTF-8 bytes each; the server encodes UTF-8). */
function astral(text: string): string {
  return `((octet_length(${text}) - octet_length(regexp_replace(${text}, '[\\U00010000-\\U0010FFFF]', '', 'g'))) / 4)`;
}

/**
 * The SQL expression of `text`'s longest head of at most `units` UTF-16 code units (`units` an SQL
 * integer expression): never a half surrogate pair, since PostgreSQL cuts between code points.
 */
export function utf16Left(text: string, units: string): string {
  const head = `left(${text}, ${units})`;
  return `left(${text}, ${units} - ${astral(head)})`;
}

/** The SQL expression of `text`'s length in UTF-16 code units (JavaScript's String.length). */
export function utf16Length(text: string): string {
  return `(char_length(${text}) + ${astral(text)})`;
}
