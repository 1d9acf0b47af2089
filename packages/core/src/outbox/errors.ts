import { isFerryError } from '../errors';
import { dbCall as translatedCall } from '../sql/dbErrors';

const PREFIX = 'outbox ';

/** Runs one outbox database operation through the one translation (sql/dbErrors.ts). */
export function dbCall<T>(operation: string, work: () => Promise<T>): Promise<T> {
  return translatedCall(`${PREFIX}${operation}`, work);
}

/** The operation a failure of dbCall names ('claim', 'renew lease', …), undefined for other errors. */
export function failedOperation(error: unknown): string | undefined {
  const operation = isFerryError(error) ? error.details.operation : undefined;
  return typeof operation === 'string' && operation.startsWith(PREFIX)
    ? operation.slice(PREFIX.length)
    : undefined;
}
