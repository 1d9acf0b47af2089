/**
 * Why a delivery's AMQP content type is not accepted, or null: its media type (lower-cased,
 * parameters aside) must be one of `contentTypes` (or absent, when `acceptMissing`), and a
 * `charset` parameter, with a media type or without, must name UTF-8. ferry reads every body as
 * UTF-8: a body declared in another charset whose bytes happen to be valid UTF-8 (Latin-1 `Ã©` is
 * the bytes of `é`) would be accepted with other text than the producer sent. Parameters are read
 * as RFC 9110 writes them (parseContentType): a quoted value may hold `;` (review 88); a list
 * that cannot be read leaves the charset unknown, refused.
 */
export function contentTypeFault(
  contentType: string | undefined,
  contentTypes: readonly string[],
  acceptMissing: boolean,
): string | null {
  const parsed = parseContentType(contentType ?? '');
  const type = parsed.media;
  if (type === '') {
    if (!acceptMissing) return 'no content type';
  } else if (!contentTypes.includes(type)) return `content type ${type} is not accepted`;
  if (parsed.fault !== null) return `its charset cannot be read: ${parsed.fault}`;
  // Read with a media type or without (`; charset=iso-8859-1` is taken as no media type, never as
  // no charset: review 87).
  for (const { name, value } of parsed.parameters) {
    if (name !== 'charset') continue;
    const charset = value.toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      return `charset ${charset} is not accepted: ferry reads bodies as UTF-8`;
    }
  }
  return null;
}

/** A content type read: its media type (trimmed, lower-cased) and parameters (names lower-cased). */
export interface ParsedContentType {
  readonly media: string;
  readonly parameters: readonly { readonly name: string; readonly value: string }[];
  /** Why the parameters after those read cannot be read, or null. */
  readonly fault: string | null;
}

const SEMICOLON = ';';
const QUOTE = '"';
const BACKSLASH = '\\';

/**
 * `type/subtype; name=value; name="quoted \"value\"; with ;"` as RFC 9110 (5.6.6) writes it: a
 * value is a token (up to the next `;`, trimmed) or a quoted string (backslash escapes); a
 * parameter without `=` is skipped. An RFC 2231 extended value (`name*=charset'lang'%XX…`) is
 * decoded and named `name`; continuations (`name*0=`) are a fault, as is a quoted string that
 * does not end. Runs on the content type (an AMQP short string: at most 255 bytes), never a body.
 */
export function parseContentType(text: string): ParsedContentType {
  const end = text.indexOf(SEMICOLON);
  const media = (end < 0 ? text : text.slice(0, end)).trim().toLowerCase();
  const parameters: { name: string; value: string }[] = [];
  const done = (fault: string | null): ParsedContentType => ({ media, parameters, fault });
  let i = end < 0 ? text.length : end + 1;
  while (i < text.length) {
    const equals = nextOf(text, i, '=');
    const semicolon = nextOf(text, i, SEMICOLON);
    if (equals >= semicolon) {
      i = semicolon + 1;
      continue;
    }
    const rawName = text.slice(i, equals).trim().toLowerCase();
    let j = equals + 1;
    while (j < text.length && (text[j] === ' ' || text[j] === '\t')) j += 1;
    let value: string;
    if (text[j] === QUOTE) {
      const quoted = quotedString(text, j);
      if (quoted === null) return done(`the quoted value of parameter ${rawName} does not end`);
      value = quoted.value;
      i = nextOf(text, quoted.end, SEMICOLON) + 1;
    } else {
      const stop = nextOf(text, j, SEMICOLON);
      value = text.slice(j, stop).trim();
      i = stop + 1;
    }
    const extended = extendedParameter(rawName, value);
    if (typeof extended === 'string') return done(extended);
    parameters.push(extended);
  }
  return done(null);
}

function nextOf(text: string, from: number, char: string): number {
  const at = text.indexOf(char, from);
  return at < 0 ? text.length : at;
}

/** The quoted string opening at `start` (unescaped) and the index after its closing quote, or null. */
function quotedString(text: string, start: number): { value: string; end: number } | null {
  const close = text.indexOf(QUOTE, start + 1);
  const escape = text.indexOf(BACKSLASH, start + 1);
  if (close >= 0 && (escape < 0 || escape > close))
    return { value: text.slice(start + 1, close), end: close + 1 };
  let value = '';
  for (let i = start + 1; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === QUOTE) return { value, end: i + 1 };
    if (c === BACKSLASH) {
      i += 1;
      if (i >= text.length) return null;
      value += text[i];
    } else value += c;
  }
  return null;
}

/**
 * A parameter as named and valued, decoding RFC 2231's `name*=charset'lang'value` (percent
 * escapes of bytes, read as Latin-1: a charset name is ASCII); a fault for what is not read.
 */
function extendedParameter(name: string, value: string): { name: string; value: string } | string {
  const star = name.indexOf('*');
  if (star < 0) return { name, value };
  if (star !== name.length - 1) return `parameter ${name} continues over several (RFC 2231), not read`;
  const parts = value.split("'");
  if (parts.length < 3) return `parameter ${name} is not charset'language'value (RFC 2231)`;
  const encoded = parts.slice(2).join("'");
  if (/%(?![0-9a-fA-F]{2})/.test(encoded)) return `parameter ${name} has a malformed percent escape`;
  const decoded = encoded.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  return { name: name.slice(0, star), value: decoded };
}

/**
 * Why an entry of the `contentTypes` option could never match a delivery, or null: a delivery's
 * content type is compared as its media type alone, trimmed (contentTypeFault), so an entry with
 * parameters or whitespace (`application/json; charset=utf-8`) matched none and every delivery
 * was dead-lettered `unsupported_content_type`.
 */
export function contentTypeOptionFault(contentType: string): string | null {
  if (!/[\s;]/.test(contentType)) return null;
  return (
    `${JSON.stringify(contentType)} can match no delivery: list media types alone, without` +
    ' parameters or spaces (a delivery is compared without its parameters; a charset other than UTF-8 is refused apart)'
  );
}
