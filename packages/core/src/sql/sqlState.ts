/** Where PostgreSQL, node-postgres and Prisma errors carry their codes (see dbErrors.ts). */
type Raw = {
  code?: unknown;
  cause?: { code?: unknown };
  meta?: { driverAdapterError?: { cause?: Record<string, unknown> } };
} | null;

/**
 * A Prisma error's driver adapter cause; {} for any other error. Prisma wraps a statement's error
 * (`meta.driverAdapterError`), but throws the DriverAdapterError of its COMMIT itself, the cause
 * (SQLSTATE `originalCode`, PostgreSQL's `originalMessage`, `kind`) its own `cause`: a COMMIT
 * PostgreSQL refused for a concurrent transaction read as an unclassified error (review: operator
 * plane, item 4).
 */
export function driverCause(error: unknown): Record<string, unknown> {
  const wrapped = (error as Raw)?.meta?.driverAdapterError?.cause;
  if (wrapped !== undefined) return wrapped;
  const raw = error as { name?: unknown; cause?: unknown } | null;
  const own = raw?.name === 'DriverAdapterError' ? raw.cause : undefined;
  return typeof own === 'object' && own !== null ? (own as Record<string, unknown>) : {};
}

/**
 * Prisma's names for a transaction PostgreSQL rolled back for a concurrent one, serialization
 * failure (40001) or deadlock (40P01) alike: error code P2034 and the driver adapter's kind
 * TransactionWriteConflict. Without a SQLSTATE beside them they are still PostgreSQL's answer, on a
 * session that is still there.
 */
export const WRITE_CONFLICT_CODES: ReadonlySet<string> = new Set(['P2034', 'TransactionWriteConflict']);

/**
 * errorCodes, plus the SQLSTATE or driver code a FerryError already translated names in its
 * `details` (a transaction's statements may be translated before the transaction fails).
 */
export function codesOf(error: unknown): string[] {
  const details = (error as { details?: { sqlState?: unknown; driverCode?: unknown } } | null)?.details;
  const translated = [details?.sqlState, details?.driverCode].filter(
    (code): code is string => typeof code === 'string',
  );
  return [...errorCodes(error), ...translated];
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
