import { isFerryError } from '../errors';
import type { Logger } from '../observe/logger';
import type { Redactor } from '../redact/redact';
import { dbCall as translatedCall } from '../sql/dbErrors';

const PREFIX = 'outbox ';

/**
 * Runs one outbox database operation through the one translation (sql/dbErrors.ts); `redact`: the
 * relay's redactor (the built-in rules without it); `log`: the component's logger.
 */
export function dbCall<T>(
  operation: string,
  work: () => Promise<T>,
  redact?: Redactor,
  log?: Logger,
): Promise<T> {
  return translatedCall(`${PREFIX}${operation}`, work, redact, log);
}

/** The operation a failure of dbCall names ('claim', 'renew lease', …), undefined for other errors. */
export function failedOperation(error: unknown): string | undefined {
  const operation = isFerryError(error) ? error.details.operation : undefined;
  return typeof operation === 'string' && operation.startsWith(PREFIX)
    ? operation.slice(PREFIX.length)
    : undefined;
}
