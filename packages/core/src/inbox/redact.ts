import { FerryConfigError, isFerryError } from '../errors';
import { storableText } from '../validate/text';

/** Longest error text stored in last_error. */
export const MAX_STORED_ERROR_CHARS = 2_000;
/** Longest error text given to an observer. */
export const MAX_OBSERVED_ERROR_CHARS = 500;

/** Turns an error message into one that may be stored and observed. */
export type InboxRedactor = (text: string) => string;

/**
 * The application's say over redaction (option `redact`; docs/inbox.md, "Redaction").
 * `allow`: a string names a sensitive key whose values may be kept (e.g. 'token' when the
 * application's tokens are page cursors); a RegExp marks text that is kept verbatim wherever it
 * matches (e.g. /order \d{13}/ for order numbers that look like card numbers).
 * `keys`: more key names whose values are redacted, beside the built-in ones.
 */
export interface InboxRedactionOptions {
  readonly allow?: readonly (string | RegExp)[];
  readonly keys?: readonly string[];
}

/** Key names whose values are redacted (case-insensitive, also as part of a longer name). */
export const SENSITIVE_KEYS: readonly string[] = [
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'secret',
  'token',
  'api[_-]?key',
  'access[_-]?key',
  'private[_-]?key',
  'authorization',
  'credentials?',
  'cookie',
  'session[_-]?id',
];

const KEY_NAME = /^[a-z0-9_-]{1,64}$/i;
/** `key=value`, `key: value`, `key is value`, `key was value`, `key to value`. */
const KEY_VALUE = String.raw`([a-z0-9_-]*)(["']?\s*[:=]\s*["']?|\s+(?:is|was|to)\s+["']?)[^\s"',;&]+`;
/** A run of digits with single spaces, dashes or a parenthesised group, not inside a word. */
const NUMBER_RUN = /(?<![\w.+-])\+?(?:\(\d+\)[ -]?)?\d(?:[ -]?\(?\d\)?)*\d(?![\w.-])/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

const FIXED_RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // Credentials in connection URLs: scheme://user:password@host, up to the authority's last '@'
  // (an empty user, an unencoded '@' in the password)
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi, '$1[redacted]@'],
  // Bearer / Basic authorization values
  [/\b(bearer|basic)\s+[a-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  // JSON web tokens
  [/\beyJ[\w-]+\.[\w-]+\.[\w-]*/g, '[redacted-token]'],
  // e-mail addresses
  [/[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/gi, '[redacted-email]'],
];

/** Card numbers (13–19 digits) and phone numbers (7–15 digits); dates and short numbers stay. */
function redactNumber(run: string): string {
  const digits = run.replace(/\D/g, '').length;
  if (digits >= 13 && digits <= 19 && !run.startsWith('+')) return '[redacted-card]';
  if (digits >= 7 && digits <= 15 && !ISO_DATE.test(run)) return '[redacted-phone]';
  return run;
}

function keyPattern(keys: readonly string[]): RegExp {
  return new RegExp(`(${keys.join('|')})${KEY_VALUE}`, 'gi');
}

function checkOptions(options: InboxRedactionOptions): void {
  const { allow = [], keys = [] } = options;
  if (
    !Array.isArray(allow) ||
    allow.some((a) => !(a instanceof RegExp) && (typeof a !== 'string' || !KEY_NAME.test(a)))
  )
    throw new FerryConfigError('redact.allow', 'must be an array of key names or RegExps');
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string' || !KEY_NAME.test(k)))
    throw new FerryConfigError('redact.keys', 'must be an array of key names (letters, digits, _ and -)');
}

/** Replaces allowed text with placeholders the rules cannot match, and puts it back after. */
function shield(text: string, patterns: readonly RegExp[]): { text: string; restore: (t: string) => string } {
  const kept: string[] = [];
  let shielded = text;
  for (const pattern of patterns) {
    const global = new RegExp(
      pattern.source,
      pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`,
    );
    shielded = shielded.replace(global, (match) => {
      kept.push(match);
      return `\uE000${'\uE002'.repeat(kept.length)}\uE001`;
    });
  }
  const restore = (t: string): string =>
    t.replace(/\uE000(\uE002+)\uE001/g, (_, marks: string) => kept[marks.length - 1] ?? '');
  return { text: shielded, restore };
}

/**
 * Builds the redactor: URL credentials, authorization values, JSON web tokens, e-mail
 * addresses, values of sensitive keys (`password is hunter2`), card and phone numbers.
 * Throws FerryConfigError for a malformed `options`.
 */
export function createRedactor(options: InboxRedactionOptions = {}): InboxRedactor {
  checkOptions(options);
  const allowedKeys = new Set(
    (options.allow ?? []).filter((a) => typeof a === 'string').map((a) => a.toLowerCase()),
  );
  const patterns = (options.allow ?? []).filter((a): a is RegExp => a instanceof RegExp);
  const keys = [...SENSITIVE_KEYS, ...(options.keys ?? [])].filter((k) => !allowedKeys.has(k.toLowerCase()));
  const keyValue = keys.length > 0 ? keyPattern(keys) : null;
  return (text) => {
    const shielded = shield(text, patterns);
    let out = FIXED_RULES.reduce(
      (acc, [pattern, replacement]) => acc.replace(pattern, replacement),
      shielded.text,
    );
    if (keyValue) out = out.replace(keyValue, '$1$2$3[redacted]');
    out = out.replace(NUMBER_RUN, redactNumber);
    return shielded.restore(out);
  };
}

const defaultRedactor = createRedactor();

/** Redacts with the built-in rules only. */
export function redactText(text: string): string {
  return defaultRedactor(text);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const IDENTIFIER = /^[\w$.:-]{1,64}$/;

function codeOf(error: Error): string | undefined {
  const code = isFerryError(error) ? error.code : (error as { code?: unknown }).code;
  return typeof code === 'string' && IDENTIFIER.test(code) ? code : undefined;
}

/**
 * A redacted, bounded one-line description of an error: `Name [CODE]: message`. The name
 * and code are kept only when they look like identifiers; the message goes through `redact`.
 * Stacks, causes and payload fragments attached to error objects are never included.
 */
export function describeError(
  error: unknown,
  max: number = MAX_STORED_ERROR_CHARS,
  redact: InboxRedactor = defaultRedactor,
): string {
  const oneLine = (text: string): string => redact(bounded(text, max).replace(/\s+/g, ' ').trim());
  try {
    if (!(error instanceof Error)) {
      return storable(`non-error thrown: ${typeof error === 'string' ? oneLine(error) : typeof error}`, max);
    }
    const name = IDENTIFIER.test(error.name) ? error.name : 'Error';
    const code = codeOf(error);
    const message: unknown = error.message;
    const text = typeof message === 'string' ? oneLine(message) : typeof message;
    return storable(`${name}${code ? ` [${code}]` : ''}: ${text}`, max);
  } catch {
    // An error whose properties throw when read (a Proxy, a throwing getter).
    return 'Error: (its name or message could not be read)';
  }
}

/**
 * The part of `text` describeError reads: the rules run over at most 4 × `max` characters (the
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
  return `${head.slice(0, cut).replace(/[a-z][a-z0-9+.-]*:\/\/\S*$/i, '')} …`;
}

/** Truncated to `max` and storable (NUL and unpaired surrogates replaced: PostgreSQL refuses NUL). */
function storable(text: string, max: number): string {
  return storableText(truncate(text, max));
}
