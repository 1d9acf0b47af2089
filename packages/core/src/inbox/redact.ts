import { isFerryError } from '../errors';

/** Longest error text stored in last_error. */
export const MAX_STORED_ERROR_CHARS = 2_000;
/** Longest error text given to an observer. */
export const MAX_OBSERVED_ERROR_CHARS = 500;

const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  // Credentials in connection URLs: scheme://user:password@host
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(?::[^\s/@]*)?@/gi, '$1[redacted]@'],
  // Bearer / Basic authorization values
  [/\b(bearer|basic)\s+[a-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  // key=value or key: value for sensitive keys
  [
    /\b(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|authorization|credentials?)(["']?\s*[:=]\s*["']?)[^\s"',;&]+/gi,
    '$1$2[redacted]',
  ],
  // e-mail addresses
  [/[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/gi, '[redacted-email]'],
];

/** Removes credentials, tokens and e-mail addresses from a text. */
export function redactText(text: string): string {
  return RULES.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * A redacted, bounded one-line description of an error: `Name [CODE]: message`.
 * Stacks, causes and payload fragments attached to error objects are never included.
 */
export function describeError(error: unknown, max: number = MAX_STORED_ERROR_CHARS): string {
  let text: string;
  if (error instanceof Error) {
    const code = isFerryError(error)
      ? error.code
      : typeof (error as { code?: unknown }).code === 'string'
        ? (error as unknown as { code: string }).code
        : undefined;
    text = `${error.name}${code ? ` [${code}]` : ''}: ${error.message}`;
  } else {
    text = `non-error thrown: ${typeof error === 'string' ? error : typeof error}`;
  }
  return truncate(redactText(text.replace(/\s+/g, ' ').trim()), max);
}
