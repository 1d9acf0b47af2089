import { FerryError } from '@ferry/core';

/**
 * FERRY_CLOSED for a ferry Nest service asked to `what` once it was closed (app.close() or its
 * onModuleDestroy()), whenever that close came: before module init, while the init awaited, or
 * after it. A closed service starts nothing (review 74).
 */
export function closedError(service: string, what: string): FerryError {
  return new FerryError(
    'FERRY_CLOSED',
    `${service} is closed (app.close() or its onModuleDestroy() ran): ${what} refused; a closed ferry service creates and starts nothing`,
  );
}
