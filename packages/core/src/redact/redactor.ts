import { withinBudget } from './allowPatterns';
import { FAILING_ROW, KEY_DETAIL } from './keyDetail';
import { keyValuePattern, replaceKeyValues, type KeyValueMatch } from './keyValue';
import { URL_CREDENTIALS, URL_CREDENTIALS_REPLACEMENT } from './urlCredentials';

/**
 * The redaction rules themselves, the one home of what counts as a secret: the redactor and the
 * sensitive-key rule (which key names' values are redacted whole). Imports nothing that checks
 * options, so that optionChecks.ts can use it (redact.ts checks the `redact` option, then builds).
 */

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
  // `pass` and `auth` as whole names or a name's last part (smtp_pass, basic_auth), not `passed`
  'pass(?![a-z])',
  'pwd',
  'secret',
  'token',
  'api[_-]?key',
  'access[_-]?key',
  'private[_-]?key',
  'authorization',
  'auth(?![a-z])',
  'signature',
  'credentials?',
  'cookie',
  'session[_-]?id',
];

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
/** How many levels of quoted values inside an allowed key's value are read (see buildRedactor). */
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
 * Builds the redactor (`options` checked already: createRedactor in redact.ts): URL credentials, authorization values, AWS access key ids, JSON web
 * tokens, e-mail addresses, values of sensitive keys (`password is hunter2`, keyValue.ts; a
 * PostgreSQL key detail `Key (token)=(…)`, keyDetail.ts), the row of a `Failing row contains (…)`, card and phone numbers.
 */
export function buildRedactor(options: RedactionOptions = {}): Redactor {
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
  const keyValueRedacted = (
    depth: number,
    match: string,
    parts: KeyValueMatch,
    at: number,
    all: string,
  ): string => {
    const { head } = parts;
    // An unclosed value runs to the end of the text: kept whole, it would keep every secret after it.
    if (parts.kind === 'unclosed') return `${head}${parts.open}[redacted]`;
    const allowed = allowedKeys.size > 0 && allowedKeys.has(fullKeyName(all, at, parts.name));
    if (parts.kind === 'plain') return allowed ? match : `${head}${parts.open}[redacted]`;
    if (!allowed || depth >= MAX_ALLOWED_DEPTH)
      return parts.kind === 'structured'
        ? `${head}[redacted]`
        : `${head}${parts.open}[redacted]${parts.close}`;
    // An allowed value is kept, not the secrets written inside it.
    const inner = redactKeyValues(depth + 1, parts.value);
    return parts.kind === 'structured' ? `${head}${inner}` : `${head}${parts.open}${inner}${parts.close}`;
  };
  const redactKeyValues = (depth: number, text: string): string =>
    replaceKeyValues(text, keyValue, (match, parts, at) => keyValueRedacted(depth, match, parts, at, text));
  const redactor: Redactor = (text) => {
    const shielded = shield(text, patterns);
    let out = FIXED_RULES.reduce(
      (acc, [pattern, replacement]) => acc.replace(pattern, replacement),
      shielded.text,
    );
    out = out.replace(KEY_DETAIL, keyDetail);
    out = out.replace(FAILING_ROW, 'Failing row contains ([redacted]$1');
    out = redactKeyValues(0, out);
    out = out.replace(XML_ELEMENT, element);
    out = out.replace(NUMBER_RUN, redactNumber);
    out = out.replace(GLUED_DIGITS, (digits) => (passesLuhn(digits) ? '[redacted-card]' : digits));
    return shielded.restore(out);
  };
  KEY_RULES.set(redactor, sensitive);
  return redactor;
}

/** The sensitive-key rule of each redactor buildRedactor made (its keys, less its allowed ones). */
const KEY_RULES = new WeakMap<Redactor, (name: string) => boolean>();

export const defaultRedactor = buildRedactor();

/**
 * The sensitive-key rule of `redact` (SENSITIVE_KEYS, its `keys`, less its allowed keys): whether
 * a value under the key `name` is redacted whole, whatever its type (redactedCopy, received()).
 * The built-in rule for a redactor ferry did not make.
 */
export function sensitiveKeyRule(redact: Redactor = defaultRedactor): (name: string) => boolean {
  return KEY_RULES.get(redact) ?? KEY_RULES.get(defaultRedactor) ?? (() => true);
}

/** Redacts with the built-in rules only. */
export function redactText(text: string): string {
  return defaultRedactor(text);
}
