import { FerryConfigError, isFerryError } from '../errors';
import { knownKeysOption, received, type OptionKeys } from '../optionChecks';
import { storableText } from '../validate/text';
import { isSafeAllowPattern } from './allowPatterns';
import { buildRedactor, defaultRedactor, type RedactionOptions, type Redactor } from './redactor';

export {
  redactText,
  sensitiveKeyRule,
  SENSITIVE_KEYS,
  type InboxRedactionOptions,
  type InboxRedactor,
  type RedactionOptions,
  type Redactor,
} from './redactor';

/** Longest error text stored in last_error. */
export const MAX_STORED_ERROR_CHARS = 2_000;
/** Longest error text given to an observer. */
export const MAX_OBSERVED_ERROR_CHARS = 500;

const KEY_NAME = /^[a-z0-9_-]{1,64}$/i;

const REDACTION_KEYS = { allow: true, keys: true } as const satisfies OptionKeys<RedactionOptions>;

/** The option's own path `redact.` (the inbox's and relay's option), also for createRedactor. */
function checkOptions(options: RedactionOptions): RedactionOptions {
  options = knownKeysOption('redact.', options, REDACTION_KEYS);
  const { allow = [], keys = [] } = options;
  if (
    !Array.isArray(allow) ||
    allow.some((a) => !(a instanceof RegExp) && (typeof a !== 'string' || !KEY_NAME.test(a)))
  )
    throw new FerryConfigError(
      'redact.allow',
      `must be an array of key names or RegExps, got ${received(allow)}`,
    );
  const unsafe = allow.find((a) => a instanceof RegExp && !isSafeAllowPattern(a));
  if (unsafe !== undefined)
    throw new FerryConfigError(
      'redact.allow',
      `${String(unsafe)} is refused: it nests quantifiers, has more than 25, or uses syntax the check cannot read (a lookbehind: write /order \\d{13}/, not /(?<=order )\\d{13}/); a catastrophic pattern could hold the event loop for minutes on one error text`,
    );
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string' || !KEY_NAME.test(k)))
    throw new FerryConfigError(
      'redact.keys',
      `must be an array of key names (letters, digits, _ and -), got ${received(keys)}`,
    );
  return options;
}

/**
 * Builds the redactor of the rules in redactor.ts with `options` (an allow-list, more keys).
 * Throws FerryConfigError for a malformed `options`.
 */
export function createRedactor(options: RedactionOptions = {}): Redactor {
  return buildRedactor(checkOptions(options));
}

/**
 * The `redact` option of the inbox and the relay, resolved: undefined is the built-in rules;
 * anything but an object { allow?, keys? } throws FerryConfigError naming `redact` (or the
 * member: `redact.allow`, `redact.keys`).
 */
export function redactOption(value: unknown): Redactor {
  if (value === undefined) return defaultRedactor;
  return createRedactor(value as RedactionOptions);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const IDENTIFIER = /^[\w$.:-]{1,64}$/;

/** Letters and underscores only (`TypeError`, `ECONNRESET`): no rule can match such a word. */
const PLAIN_WORD = /^[a-z_]{1,64}$/i;

/**
 * `value` when it is an identifier (letters, digits, `_ $ . : -`, at most 64) the rules leave as
 * it is; undefined for anything else (a name or code may be a secret shaped like an identifier:
 * `password:hunter2`, a JSON web token).
 */
function shownIdentifier(value: unknown, redact: Redactor): string | undefined {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) return undefined;
  return PLAIN_WORD.test(value) || redact(value) === value ? value : undefined;
}

/** An error's name when it is an identifier the rules leave as it is, else 'Error'. */
export function errorName(error: Error, redact: Redactor = defaultRedactor): string {
  return shownIdentifier(error.name, redact) ?? 'Error';
}

function codeOf(error: Error, redact: Redactor): string | undefined {
  return shownIdentifier(isFerryError(error) ? error.code : (error as { code?: unknown }).code, redact);
}

/**
 * A redacted, bounded one-line description of an error: `Name [CODE]: message`. The name
 * and code are kept only when they look like identifiers; the message goes through `redact`.
 * Stacks, causes and payload fragments attached to error objects are never included.
 */
export function describeError(
  error: unknown,
  max: number = MAX_STORED_ERROR_CHARS,
  redact: Redactor = defaultRedactor,
): string {
  const oneLine = (text: string): string => redactBounded(text, max, redact);
  try {
    if (!(error instanceof Error)) {
      return storable(`non-error thrown: ${typeof error === 'string' ? oneLine(error) : typeof error}`, max);
    }
    const name = errorName(error, redact);
    const code = codeOf(error, redact);
    const message: unknown = error.message;
    const text = typeof message === 'string' ? oneLine(message) : typeof message;
    return storable(`${name}${code ? ` [${code}]` : ''}: ${text}`, max);
  } catch {
    // An error whose properties throw when read (a Proxy, a throwing getter).
    return 'Error: (its name or message could not be read)';
  }
}

/**
 * `text` (an error text a publisher or broker gave, not an error object) as one redacted line of
 * at most `max` characters that PostgreSQL can store: what describeError makes of a message.
 */
export function redactLine(text: string, max: number, redact: Redactor = defaultRedactor): string {
  return storable(redactBounded(text, max, redact), max);
}

/**
 * `text` an operator gave (a reason ferry stores and audits), redacted with the built-in rules, its
 * lines kept, then cut to at most `max` characters PostgreSQL can store. The text is checked as the
 * caller gave it; redaction lengthens short secrets (`x@y.io` is `[redacted-email]`), so the
 * redacted text is cut as the relay's error texts are, never refused (review 70).
 */
export function redactedText(text: string, max: number): string {
  return storable(defaultRedactor(text), max);
}

/**
 * The rules over the part of `text` that `max` lets them read, then as one line: the rules read
 * the lines as written (a YAML block scalar's value is on the lines after its key).
 */
function redactBounded(text: string, max: number, redact: Redactor): string {
  return redact(bounded(text, max)).replace(/\s+/g, ' ').trim();
}

/**
 * The part of `text` describeError and redactLine read: the rules run over at most 4 × `max` characters (the
 * description keeps `max`), so an error of many megabytes cannot hold the event loop. The cut
 * must not leave a secret half there, which its rule would no longer match (a URL's password
 * without the '@' after it): it goes back to the last whitespace, else to the last character
 * that cannot be inside a word, number or token (a `;`, `:`, `/`, `=`, …), and a URL left open
 * at the end is dropped. Text that is one run of word characters is cut as it is.
 */
function bounded(text: string, max: number): string {
  const limit = Math.max(4 * max, 256);
  if (text.length <= limit) return text;
  const head = text.slice(0, limit);
  const space = head.search(/\s\S*$/);
  const delimiter = head.search(/[^\w.-][\w.-]*$/);
  const cut = space > 0 ? space : delimiter > 0 ? delimiter + 1 : limit;
  return `${withoutOpenUrl(head.slice(0, cut))} …`;
}

/**
 * `text` without a URL left open at its end (scheme://… up to the end with no whitespace):
 * its authority may have been cut before the '@' that ends the credentials. Found from the last
 * token's first `://` (a linear scan; a RegExp starting with the scheme would be quadratic).
 */
function withoutOpenUrl(text: string): string {
  let tokenStart = text.length;
  while (tokenStart > 0 && !/\s/.test(text.charAt(tokenStart - 1))) tokenStart -= 1;
  const separator = text.indexOf('://', tokenStart);
  if (separator < 0) return text;
  let start = separator;
  while (start > tokenStart && /[a-z0-9+.-]/i.test(text.charAt(start - 1))) start -= 1;
  while (start < separator && !/[a-z]/i.test(text.charAt(start))) start += 1;
  return start < separator ? text.slice(0, start) : text;
}

/** Truncated to `max` and storable (NUL and unpaired surrogates replaced: PostgreSQL refuses NUL). */
function storable(text: string, max: number): string {
  return storableText(truncate(text, max));
}
