import { FerryError, type FerryErrorCode } from '../errors';

interface Translation {
  readonly code: FerryErrorCode;
  readonly retriable: boolean;
}

const UNAVAILABLE: Translation = { code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true };
const REFUSED: Translation = { code: 'FERRY_DATABASE_UNAVAILABLE', retriable: false };
const SCHEMA: Translation = { code: 'FERRY_SCHEMA_NOT_READY', retriable: false };

/** PostgreSQL SQLSTATEs (exact, or a two-character class) and driver codes, by translation. */
const TRANSLATIONS: Readonly<Record<string, Translation>> = {
  '08': UNAVAILABLE, // connection exception class
  '40001': UNAVAILABLE, // serialization failure
  '40P01': UNAVAILABLE, // deadlock detected
  '53300': UNAVAILABLE, // too many connections
  '55P03': UNAVAILABLE, // lock not available
  '57014': UNAVAILABLE, // query canceled (statement timeout)
  '57P01': UNAVAILABLE, // admin shutdown
  '57P02': UNAVAILABLE, // crash shutdown
  '57P03': UNAVAILABLE, // cannot connect now
  '42P01': SCHEMA, // undefined table
  '42703': SCHEMA, // undefined column
  '42883': SCHEMA, // undefined function
  ECONNREFUSED: UNAVAILABLE,
  ECONNRESET: UNAVAILABLE,
  ETIMEDOUT: UNAVAILABLE,
  EPIPE: UNAVAILABLE,
  P1001: UNAVAILABLE, // Prisma: cannot reach database
  P1002: UNAVAILABLE, // Prisma: database timed out
  P1008: UNAVAILABLE, // Prisma: operation timed out
  P1017: UNAVAILABLE, // Prisma: server closed the connection
  P2024: UNAVAILABLE, // Prisma: pool timeout
  // Prisma driver adapter error kinds
  DatabaseNotReachable: UNAVAILABLE,
  ConnectionClosed: UNAVAILABLE,
  SocketTimeout: UNAVAILABLE,
  TooManyConnections: UNAVAILABLE,
  TransactionWriteConflict: UNAVAILABLE,
  TableDoesNotExist: SCHEMA,
  ColumnNotFound: SCHEMA,
};

function codesOf(error: unknown): string[] {
  const e = error as {
    code?: unknown;
    cause?: { code?: unknown };
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; code?: unknown; kind?: unknown } } };
  } | null;
  const driver = e?.meta?.driverAdapterError?.cause;
  return [driver?.originalCode, driver?.code, driver?.kind, e?.code, e?.cause?.code].filter(
    (c): c is string => typeof c === 'string',
  );
}

/**
 * Translates a PostgreSQL / driver / Prisma error into a FerryError at the boundary
 * (the original stays as `cause`); FerryErrors pass through unchanged.
 */
export function translateDbError(error: unknown, operation: string): FerryError {
  if (error instanceof FerryError) return error;
  const codes = codesOf(error);
  const translation =
    codes.map((c) => TRANSLATIONS[c] ?? TRANSLATIONS[c.slice(0, 2)]).find((t) => t !== undefined) ??
    (codes.some((c) => /^P10/.test(c)) ? UNAVAILABLE : REFUSED);
  const message = error instanceof Error ? error.message.trim().split('\n').pop() : String(error);
  return new FerryError(translation.code, `outbox ${operation} failed: ${message}`, {
    cause: error,
    retriable: translation.retriable,
    details: { operation, sqlState: codes[0] ?? null },
  });
}

/** Runs one database operation, translating its failure. */
export async function dbCall<T>(operation: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateDbError(error, operation);
  }
}
