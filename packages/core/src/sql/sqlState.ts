/** Where PostgreSQL, node-postgres and Prisma errors carry their codes (see dbErrors.ts). */
type Raw = {
  code?: unknown;
  cause?: { code?: unknown };
  meta?: { driverAdapterError?: { cause?: Record<string, unknown> } };
} | null;

/** A Prisma error's driver adapter cause; {} for any other error. */
export function driverCause(error: unknown): Record<string, unknown> {
  return (error as Raw)?.meta?.driverAdapterError?.cause ?? {};
}

/**
 * The codes an error carries, wherever the driver put them: a Prisma error's driver adapter cause
 * (originalCode, code, kind), the error's own code, its cause's code.
 */
export function errorCodes(error: unknown): string[] {
  const e = error as Raw;
  const driver = driverCause(error);
  return [driver.originalCode, driver.code, driver.kind, e?.code, e?.cause?.code].filter(
    (c): c is string => typeof c === 'string',
  );
}

/** Five characters, not an errno name (EPIPE) nor a Prisma code (P1001 … P6xxx; P0xxx is PL/pgSQL's). */
function isSqlState(code: string): boolean {
  return /^[0-9A-Z]{5}$/.test(code) && !/^E[A-Z]+$/.test(code) && !/^P[1-9]\d{3}$/.test(code);
}

/** The error's SQLSTATE, or null when it carries none. */
export function sqlStateOf(error: unknown): string | null {
  return errorCodes(error).find(isSqlState) ?? null;
}

/**
 * The error is PostgreSQL's answer to the statement (a SQLSTATE outside class 08, also as a
 * FerryError's details.sqlState): the statement is over. Otherwise (a lost or destroyed connection)
 * the server may still be running it.
 */
export function answeredByServer(error: unknown): boolean {
  const state =
    sqlStateOf(error) ?? (error as { details?: { sqlState?: unknown } } | null)?.details?.sqlState;
  return typeof state === 'string' && !state.startsWith('08');
}
