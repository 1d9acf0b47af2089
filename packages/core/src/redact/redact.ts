import { FerryConfigError, isFerryError } from '../errors';
import { knownKeysOption, received, type OptionKeys } from '../optionChecks';
import { storableText } from '../validate/text';
import { isSafeAllowPattern, withinBudget } from './allowPatterns';
import { FAILING_ROW, KEY_DETAIL } from './keyDetail';
import { keyValueParts, keyValuePattern, type KeyValueGroups } from './keyValue';
import { URL_CREDENTIALS, URL_CREDENTIALS_REPLACEMENT } from './urlCredentials';

/** Longest error text stored in last_error. */
export const MAX_STORED_ERROR_CHARS = 2_000;
/** Longest error text given to an observer. */
export const MAX_OBSERVED_ERROR_CHARS = 500;

/** Turns an error message into one that may be stored and observed. */
export type Redactor = (text: string) => string;

/**
 * The application's say over redaction: option `redact` of the inbox and of the relay, one
 * shape for both (docs/inbox.md, "Redaction"). `allow`: a string names a sensitive key whose
 * values may be kept (e.g. 'token' when the application's tokens are page cursors); a RegExp
 * marks text that is kept verbatim wherever it matches (e.g. /order \d{13}/ for order numbers
 * that look like card numbers); one with nested quantifiers is refused, and all of them together
 * get ALLOW_PATTERNS_BUDGET_MS per text. `keys`: more key names whose values are redacted,
 * beside the built-in ones.
 */
export interface RedactionOptions {
  readonly allow?: readonly (string | RegExp)[];
  readonly keys?: readonly string[];
}

/** The inbox's name for Redactor, kept. */
export type InboxRedactor = Redactor;
/** The inbox's name for RedactionOptions, kept. */
export type InboxRedactionOptions = RedactionOptions;

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
/**
 * An XML element with text only (`<password>hunter2</password>`): its text is redacted when its
 * name holds a sensitive key (the key rule needs a `:` or `=`). A name of at most 64 characters
 * and the text up to the next '<' from each '<' (the scans do not overlap): linear.
 */
const XML_ELEMENT = /<([a-z][\w:.-]{0,63})>[^<]+<\/\1>/gi;
/**
 * A run of digits with single spaces, dashes or a parenthesised group, not inside a word. It
 * starts only where a run can start: not inside a word, and not where a run could go on (after a
 * digit or a ')', then an optional space or dash, then an optional '('): a run tried from there
 * was tried from its start already, and trying every digit of `1 1 1 …`, `(1(1(1…`, `1-1)1-1)…`
 * again to the end was quadratic. Each place is thus read by a constant number of tries: linear
 * (boundedTime.test.ts).
 */
const NUMBER_RUN = /(?<![\w.+-])(?<![\d)][ -]?\(?)\+?(?:\(\d+\)[ -]?)?\d(?:[ -]?\(?\d\)?)*\d(?![\w.-])/g;
/** How many levels of quoted values inside an allowed key's value are read (see createRedactor). */
const MAX_ALLOWED_DEPTH = 4;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
/**
 * 13–19 digits glued to a word or a dash (`pan_4111…`, `card-4111…`), which NUMBER_RUN leaves:
 * a card number when it passes the Luhn check (a timestamp or an id mostly does not). Starts
 * only at a run's first digit and reads at most 19: linear.
 */
const GLUED_DIGITS = /(?<=[a-z_-])(?<!\d)\d{13,19}(?![\w])/gi;

/** One parameter of an authorization value: `abc123`, `nonce="n1"` (a quoted part to its closing quote). */
const AUTH_PARAM = String.raw`(?:"[^"]*"|[^\s"';&,])+`;

const FIXED_RULES: ReadonlyArray<readonly [RegExp, string]> = [
  [URL_CREDENTIALS, URL_CREDENTIALS_REPLACEMENT],
  // PEM private keys, to their END line (or the end of a cut text)
  [
    /-----BEGIN [A-Z ]{0,20}PRIVATE KEY-----(?:[^-]|-(?!----END ))*(?:-----END [A-Z ]{0,20}PRIVATE KEY-----)?/g,
    '[redacted-private-key]',
  ],
  // Authorization values of other schemes (Token, ApiKey, Digest, …): the scheme and the rest
  // of the value, comma-separated parameters included
  [
    new RegExp(
      String.raw`(authorization\\?["']?\s*[:=]\s*\\?["']?)(?!bearer\b|basic\b)[a-z][\w-]*\s+${AUTH_PARAM}(?:,\s*${AUTH_PARAM})*`,
      'gi',
    ),
    '$1[redacted]',
  ],
  // Bearer / Basic authorization values
  [/\b(bearer|basic)\s+[a-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  // AWS access key ids (long-term AKIA, temporary ASIA) wherever they stand, named or not; not
  // inside a longer word (a message id that holds the letters). Fixed length: linear.
  [/(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g, '[redacted-aws-key]'],
  // JSON web tokens
  [/\beyJ[\w-]+\.[\w-]+\.[\w-]*/g, '[redacted-token]'],
  // e-mail addresses
  // (only from the start of a run of local-part characters: linear, see URL_CREDENTIALS)
  [/(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/gi, '[redacted-email]'],
];

/** Whether `digits` pass the Luhn check card numbers carry. */
function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i -= 1, double = !double) {
    let n = digits.charCodeAt(i) - 48;
    if (double) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
    sum += n;
  }
  return sum % 10 === 0;
}

/** Card numbers (13–19 digits) and phone numbers (7–15 digits); dates and short numbers stay. */
function redactNumber(run: string): string {
  const digits = run.replace(/\D/g, '').length;
  if (digits >= 13 && digits <= 19 && !run.startsWith('+')) return '[redacted-card]';
  if (digits >= 7 && digits <= 15 && !ISO_DATE.test(run)) return '[redacted-phone]';
  return run;
}

/**
 * The whole key name a key rule match starts in, lower-cased: the name characters before `at`
 * (at most 64: bounded, so that each match reads a constant stretch back) and `name`. An allowed
 * key name keeps only that exact key: allow: ['token'] keeps `token: page-2`, not refresh_token.
 */
function fullKeyName(text: string, at: number, name: string): string {
  let start = at;
  while (start > 0 && at - start <= 64 && /[a-z0-9_-]/i.test(text.charAt(start - 1))) start -= 1;
  return (text.slice(start, at) + name).toLowerCase();
}

const REDACTION_KEYS = { allow: true, keys: true } as const satisfies OptionKeys<RedactionOptions>;

/** The option's own path `redact.` (the inbox's and relay's option), also for createRedactor. */
function checkOptions(options: RedactionOptions): void {
  knownKeysOption('redact.', options, REDACTION_KEYS);
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
}

interface Shielded {
  readonly text: string;
  readonly restore: (t: string) => string;
}

const UNSHIELDED = (text: string): Shielded => ({ text, restore: (t) => t });

/**
 * A kept match's placeholder: its index in 8 hexadecimal digits written as private-use
 * characters (U+E010–U+E01F) between U+E000 and U+E001, which no rule matches. Fixed width:
 * placeholders that grew with the index cost n²/2 characters for n matches.
 */
function placeholder(index: number): string {
  const hex = index.toString(16).padStart(8, '0');
  return `\uE000${[...hex].map((d) => String.fromCharCode(0xe010 + parseInt(d, 16))).join('')}\uE001`;
}

const PLACEHOLDER = /\uE000([\uE010-\uE01F]{8})\uE001/g;

function placeholderIndex(digits: string): number {
  return [...digits].reduce((n, d) => n * 16 + (d.charCodeAt(0) - 0xe010), 0);
}

/**
 * Replaces allowed text with placeholders the rules cannot match, and puts it back after. The
 * patterns run within ALLOW_PATTERNS_BUDGET_MS; past it none of them keeps anything.
 */
function shield(text: string, patterns: readonly RegExp[]): Shielded {
  if (patterns.length === 0) return UNSHIELDED(text);
  const kept: string[] = [];
  const shielded = withinBudget(() =>
    patterns.reduce(
      (acc, pattern) =>
        acc.replace(pattern, (match) => {
          kept.push(match);
          return placeholder(kept.length - 1);
        }),
      text,
    ),
  );
  if (shielded === undefined) return UNSHIELDED(text);
  const restore = (t: string): string =>
    t.replace(PLACEHOLDER, (_, digits: string) => kept[placeholderIndex(digits)] ?? '');
  return { text: shielded, restore };
}

/**
 * `pattern` as a global RegExp (String.replace then replaces every match), not sticky: with `y`
 * it would match only at the start and right after each match, keeping nothing in between.
 */
function globalPattern(pattern: RegExp): RegExp {
  return new RegExp(pattern.source, `${pattern.flags.replace(/[gy]/g, '')}g`);
}

/**
 * Builds the redactor: URL credentials, authorization values, AWS access key ids, JSON web
 * tokens, e-mail addresses, values of sensitive keys (`password is hunter2`, keyValue.ts; a
 * PostgreSQL key detail `Key (token)=(…)`, keyDetail.ts), the row of a `Failing row contains (…)`, card and phone numbers.
 * Throws FerryConfigError for a malformed `options`.
 */
export function createRedactor(options: RedactionOptions = {}): Redactor {
  checkOptions(options);
  const allowedKeys = new Set(
    (options.allow ?? []).filter((a) => typeof a === 'string').map((a) => a.toLowerCase()),
  );
  const patterns = (options.allow ?? []).filter((a): a is RegExp => a instanceof RegExp).map(globalPattern);
  const keys = [...SENSITIVE_KEYS, ...(options.keys ?? [])];
  const keyValue = keyValuePattern(keys);
  const sensitiveName = new RegExp(`(?:${keys.join('|')})`, 'i');
  const sensitive = (name: string): boolean =>
    sensitiveName.test(name) && !allowedKeys.has(name.trim().toLowerCase());
  const element = (match: string, name: string): string =>
    sensitive(name) ? `<${name}>[redacted]</${name}>` : match;
  // The values of a key violation's detail whose columns name a sensitive key
  const keyDetail = (match: string, columns: string, _values: string, close: string): string =>
    sensitive(columns) ? `Key (${columns})=([redacted]${close}` : match;
  /**
   * A value quoted inside an allowed value is read again (`token: "a password: b"`), at most
   * MAX_ALLOWED_DEPTH levels deep: deeper, the allowed value is redacted too.
   */
  const keyValueRedacted = (depth: number, match: string, args: unknown[]): string => {
    const parts = keyValueParts(match, args[0] as string, args[args.length - 1] as KeyValueGroups);
    const { head } = parts;
    // An unclosed value runs to the end of the text: kept whole, it would keep every secret after it.
    if (parts.kind === 'unclosed') return `${head}${parts.open}[redacted]`;
    const at = args[args.length - 3] as number;
    const all = args[args.length - 2] as string;
    const allowed = allowedKeys.size > 0 && allowedKeys.has(fullKeyName(all, at, parts.name));
    if (parts.kind === 'plain') return allowed ? match : `${head}${parts.open}[redacted]`;
    if (!allowed || depth >= MAX_ALLOWED_DEPTH) return `${head}${parts.open}[redacted]${parts.close}`;
    // An allowed value is kept, not the secrets written inside it.
    const inner = parts.value.replace(keyValue, (m: string, ...a: unknown[]) =>
      keyValueRedacted(depth + 1, m, a),
    );
    return `${head}${parts.open}${inner}${parts.close}`;
  };
  return (text) => {
    const shielded = shield(text, patterns);
    let out = FIXED_RULES.reduce(
      (acc, [pattern, replacement]) => acc.replace(pattern, replacement),
      shielded.text,
    );
    out = out.replace(KEY_DETAIL, keyDetail);
    out = out.replace(FAILING_ROW, 'Failing row contains ([redacted]$1');
    out = out.replace(keyValue, (match: string, ...args: unknown[]) => keyValueRedacted(0, match, args));
    out = out.replace(XML_ELEMENT, element);
    out = out.replace(NUMBER_RUN, redactNumber);
    out = out.replace(GLUED_DIGITS, (digits) => (passesLuhn(digits) ? '[redacted-card]' : digits));
    return shielded.restore(out);
  };
}

const defaultRedactor = createRedactor();

/**
 * The `redact` option of the inbox and the relay, resolved: undefined is the built-in rules;
 * anything but an object { allow?, keys? } throws FerryConfigError naming `redact` (or the
 * member: `redact.allow`, `redact.keys`).
 */
export function redactOption(value: unknown): Redactor {
  if (value === undefined) return defaultRedactor;
  return createRedactor(value as RedactionOptions);
}

/** Redacts with the built-in rules only. */
export function redactText(text: string): string {
  return defaultRedactor(text);
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

/** The rules over the part of `text` that `max` lets them read, as one line. */
function redactBounded(text: string, max: number, redact: Redactor): string {
  return redact(bounded(text, max).replace(/\s+/g, ' ').trim());
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
