import { FerryError, isFerryError, type FerryErrorCode } from '../errors';
import { defaultLogger, type Logger } from '../observe/logger';
import {
  MAX_STORED_ERROR_CHARS,
  redactLine,
  redactText,
  sensitiveKeyRule,
  type Redactor,
} from '../redact/redact';
import { redactedCopy } from '../redact/redactedCopy';
import type { SqlExecutor } from './executor';
import { codesOf, driverCause, errorCodes, sqlStateOf, WRITE_CONFLICT_CODES } from './sqlState';

/**
 * The one translation of PostgreSQL, node-postgres and Prisma errors into FerryErrors, used by
 * the outbox, the inbox, both admins, checkSchema() and initialize(). Input problems (SQLSTATE
 * classes 22 and 23) are non-retriable FERRY_VALIDATION_FAILED, so a transport never retries a
 * poison message as if the database were down; infrastructure trouble is retriable
 * FERRY_DATABASE_UNAVAILABLE or FERRY_TIMEOUT; anything unknown is retriable FERRY_DATABASE_ERROR
 * and logged with its SQLSTATE.
 */
interface Translation {
  readonly code: FerryErrorCode;
  readonly retriable: boolean;
}

const UNAVAILABLE: Translation = { code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true };
const TIMEOUT: Translation = { code: 'FERRY_TIMEOUT', retriable: true };
const INVALID: Translation = { code: 'FERRY_VALIDATION_FAILED', retriable: false };
const SCHEMA: Translation = { code: 'FERRY_SCHEMA_NOT_READY', retriable: false };
/**
 * What a FERRY_SCHEMA_NOT_READY message adds to PostgreSQL's own text ("column \"payload_bytes\"
 * of relation \"outbox_events\" does not exist"): which command fixes it. Every statement
 * translated here is ferry's own, so a table, column or function it lacks is a migration not
 * applied (a deploy of a newer @ferry/core before `ferry migrate`), or a search_path that does not
 * reach ferry's tables.
 */
export const SCHEMA_HINT =
  " (ferry's tables are not what this version of @ferry/core needs: run `ferry migrate`; `ferry check` lists what is missing)";
const UNKNOWN: Translation = { code: 'FERRY_DATABASE_ERROR', retriable: true };
/**
 * The application ended the pool or client (or destroyed the Kysely instance): no call will ever
 * succeed, and no message is at fault (fromPg.ts openTarget).
 */
const CLOSED: Translation = { code: 'FERRY_CLOSED', retriable: false };

/** SQLSTATEs (exact, or a two-character class), driver codes and Prisma codes / kinds. */
const TRANSLATIONS: Readonly<Record<string, Translation>> = {
  '08': UNAVAILABLE, // connection exception
  // The database refuses ferry as a whole, whatever the statement or its data: no message is at
  // fault, so transports hold their deliveries (isBatchWideFailure) until an operator fixes it.
  '28': UNAVAILABLE, // invalid authorization: a role that does not exist (28000), a wrong password (28P01)
  '3D000': UNAVAILABLE, // the database does not exist
  '25006': UNAVAILABLE, // read-only transaction: a standby, or a primary a failover demoted
  '42501': UNAVAILABLE, // insufficient privilege: a GRANT ferry's role lacks
  '58': UNAVAILABLE, // system error outside PostgreSQL: I/O error
  F0: UNAVAILABLE, // configuration file error
  '22': INVALID, // data exception: NUL in jsonb (22P05), bad encoding (22021), bad input syntax
  '23': INVALID, // integrity constraint violation: CHECK, NOT NULL, UNIQUE, FOREIGN KEY
  '25P03': UNAVAILABLE, // idle-in-transaction timeout: the session was ended
  '40': UNAVAILABLE, // transaction rollback: serialization failure, deadlock
  '53': UNAVAILABLE, // insufficient resources: disk full, out of memory, too many connections
  '54000': INVALID, // program limit exceeded, e.g. an index row too large for its key
  '55P03': UNAVAILABLE, // lock not available (lock_timeout)
  '57014': TIMEOUT, // query canceled (statement_timeout)
  '57P01': UNAVAILABLE, // admin shutdown
  '57P02': UNAVAILABLE, // crash shutdown
  '57P03': UNAVAILABLE, // cannot connect now (starting up, recovery)
  '57P05': UNAVAILABLE, // idle session timeout
  '57': UNAVAILABLE, // operator intervention, e.g. the database was dropped (57P04)
  '42P01': SCHEMA, // undefined table
  '42703': SCHEMA, // undefined column
  '42883': SCHEMA, // undefined function
  '3F000': SCHEMA, // invalid schema name
  ECONNREFUSED: UNAVAILABLE,
  ECONNRESET: UNAVAILABLE,
  ETIMEDOUT: UNAVAILABLE,
  EPIPE: UNAVAILABLE,
  ENOTFOUND: UNAVAILABLE,
  EAI_AGAIN: UNAVAILABLE,
  EHOSTUNREACH: UNAVAILABLE,
  ENETUNREACH: UNAVAILABLE,
  ENETDOWN: UNAVAILABLE,
  ECONNABORTED: UNAVAILABLE,
  // TLS the server refuses or a certificate Node does not trust: no statement was sent (as Prisma's
  // TlsConnectionError below).
  DEPTH_ZERO_SELF_SIGNED_CERT: UNAVAILABLE,
  SELF_SIGNED_CERT_IN_CHAIN: UNAVAILABLE,
  CERT_HAS_EXPIRED: UNAVAILABLE,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNAVAILABLE,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNAVAILABLE,
  ERR_TLS_CERT_ALTNAME_INVALID: UNAVAILABLE,
  P1001: UNAVAILABLE, // Prisma: cannot reach database
  P1002: UNAVAILABLE, // Prisma: database timed out
  P1008: TIMEOUT, // Prisma: operation timed out
  P1017: UNAVAILABLE, // Prisma: server closed the connection
  P2024: UNAVAILABLE, // Prisma: timed out fetching a connection from the pool
  P2028: TIMEOUT, // Prisma: interactive transaction expired or closed
  P2034: UNAVAILABLE, // Prisma: write conflict or deadlock (class 40), as TransactionWriteConflict
  // Prisma driver adapter error kinds
  DatabaseNotReachable: UNAVAILABLE,
  ConnectionClosed: UNAVAILABLE,
  SocketTimeout: UNAVAILABLE,
  TooManyConnections: UNAVAILABLE,
  AuthenticationFailed: UNAVAILABLE,
  DatabaseDoesNotExist: UNAVAILABLE,
  DatabaseAccessDenied: UNAVAILABLE,
  TlsConnectionError: UNAVAILABLE,
  TransactionWriteConflict: UNAVAILABLE, // class 40 (WRITE_CONFLICT_CODES)
  TableDoesNotExist: SCHEMA,
  ColumnNotFound: SCHEMA,
};

/**
 * SQLSTATEs (or classes) with which PostgreSQL ended the session, or never opened one: whatever
 * their translation, no statement runs on that session any more (sessionGone).
 */
const SESSION_GONE = ['08', '28', '3D000', '25P03', '53300', '57P01', '57P02', '57P03', '57P04', '57P05'];

/**
 * Whether `error` says there is no session with PostgreSQL to run a statement on: the connection
 * failed or was lost (class 08; a driver's connection code or message, and ferry's own "no
 * connection within" deadline, FERRY_DATABASE_UNAVAILABLE without a SQLSTATE), PostgreSQL ended the
 * session (57P01-57P05, 25P03) or refused to open one (28xxx, 3D000, 53300). Any other SQLSTATE is
 * PostgreSQL's answer to a statement on a session still there (a lock timeout, a missing
 * privilege, a deadlock, a read-only standby, a full disk), although FERRY_DATABASE_UNAVAILABLE too;
 * so is Prisma's write conflict without a SQLSTATE (WRITE_CONFLICT_CODES). FERRY_CLOSED: the
 * application ended the pool. An error not translated yet is read as its translation would be.
 */
export function sessionGone(error: unknown): boolean {
  const read = readForSession(error);
  if (read === null) return false;
  // The application ended the pool (FERRY_CLOSED): no session will ever be opened on it.
  if (read.code === 'FERRY_CLOSED') return true;
  const state = read.sqlState;
  if (state !== null) return SESSION_GONE.some((gone) => state.startsWith(gone));
  // Prisma's write conflict without its SQLSTATE: class 40, PostgreSQL's answer on a live session.
  if (read.codes.some((code) => WRITE_CONFLICT_CODES.has(code))) return false;
  return read.code === 'FERRY_DATABASE_UNAVAILABLE';
}

/**
 * Whether `error` says the application ended the pool or client it was sent on (FERRY_CLOSED), as
 * ferry translates it or as the driver threw it (an application's transaction adapter: pg-pool
 * after end(), a Kysely instance destroyed): no statement will ever succeed on it again
 * (EndedClientStop: the poll loops stop on it).
 */
export function clientEnded(error: unknown): boolean {
  return readForSession(error)?.code === 'FERRY_CLOSED';
}

/**
 * What sessionGone reads of `error`: a FerryError's code and SQLSTATE; a driver's or Prisma's
 * error as it was thrown (an application's transaction adapter, which ferry does not translate)
 * as its translation would be, without logging it (review 104: the driver's FERRY_CLOSED, a pool
 * ended or a Kysely instance destroyed, was read as a live session). Null for a non-object.
 */
function readForSession(
  error: unknown,
): { code: FerryErrorCode; sqlState: string | null; codes: readonly string[] } | null {
  if (isFerryError(error)) {
    const given = error.details.sqlState;
    const sqlState = typeof given === 'string' ? given : sqlStateOf(error);
    return { code: error.code, sqlState, codes: codesOf(error) };
  }
  if (error === null || typeof error !== 'object') return null;
  const facts = factsOf(error);
  return { code: translationOf(facts).code, sqlState: facts.sqlState, codes: facts.codes };
}

/** node-postgres raises these without a code; matched on the message, first match wins. */
const MESSAGE_TRANSLATIONS: readonly (readonly [RegExp, Translation])[] = [
  // Ended by the application (through Prisma's driver adapter and Kysely too): pg-pool after its
  // end(); a client after its end(), for a statement sent afterwards ("Client was closed") and for
  // one in flight or queued when end() was called (exactly "Connection terminated": a session the
  // server ended is "... unexpectedly", a connect past its timeout "... due to connection
  // timeout"); a Kysely instance after destroy().
  [/Cannot use a pool after calling end on the pool/i, CLOSED],
  [/Client was closed and is not queryable/i, CLOSED],
  [/^Connection terminated$/i, CLOSED],
  [/driver has already been destroyed/i, CLOSED],
  [/Connection terminated/i, UNAVAILABLE],
  // node-postgres's client-side query_timeout: the server did not answer in time, as a statement
  // past statement_timeout (57014) or ferry's own deadline: a timeout (a batch's size may cause it).
  [/Query read timeout/i, TIMEOUT],
  [/timeout exceeded when trying to connect/i, UNAVAILABLE],
  [/Client has encountered a connection error/i, UNAVAILABLE],
  [/Can't reach database server/i, UNAVAILABLE],
  [/\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)\b/, UNAVAILABLE],
  // node-postgres when the server answers an SSL request with no (sslmode=require on a server
  // without TLS): an Error with no code.
  [/does not support SSL connections/i, UNAVAILABLE],
];

interface Facts {
  readonly codes: readonly string[];
  readonly sqlState: string | null;
  readonly constraint: string | null;
  readonly column: string | null;
  readonly table: string | null;
  readonly message: string;
  /** A connect to a Unix socket failed (socketConnectFailure). */
  readonly socketConnect: boolean;
}

type Raw = {
  message?: unknown;
  constraint?: unknown;
  column?: unknown;
  table?: unknown;
} | null;

function str(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

function factsOf(error: unknown): Facts {
  const e = error as Raw;
  const driver = driverCause(error);
  const codes = errorCodes(error);
  const message =
    str(driver.originalMessage) ??
    (error instanceof Error ? (error.message.trim().split('\n').pop() ?? '') : String(error));
  return {
    codes,
    sqlState: sqlStateOf(error),
    constraint:
      str(e?.constraint) ?? str(driver.constraint) ?? /constraint "([^"]+)"/.exec(message)?.[1] ?? null,
    column: str(e?.column) ?? str(driver.column) ?? /column "([^"]+)"/.exec(message)?.[1] ?? null,
    table: str(e?.table) ?? str(driver.table) ?? /relation "([^"]+)"/.exec(message)?.[1] ?? null,
    message,
    socketConnect: socketConnectFailure(error),
  };
}

/**
 * An application's own Kysely or Prisma transaction used after it committed or rolled back (a
 * kept `trx` given to emit): no statement can run on it again, so it is not retriable (as an ended
 * node-postgres client is refused); Prisma names it with P2028, which otherwise means a timeout
 * (an expired transaction stays FERRY_TIMEOUT), in several wordings, and answers "Transaction not
 * found" once the transaction is older than the last 100 it remembers (review 41). Review 40.
 */
const ENDED_TRANSACTION =
  /Transaction is already (?:committed|rolled back)|cannot be executed on a (?:committed|rolled back) transaction|cannot be executed on a transaction that was (?:committed|rolled back)|Transaction not found\b/;

/**
 * A connect to a Unix socket whose file is gone while PostgreSQL is down (ENOENT), or not ours to
 * open (EACCES): an outage, as ECONNREFUSED over TCP (review 44: read as a database error, the
 * RabbitMQ consumer dead-lettered deliveries). Only for a connect (`syscall`): the same codes from
 * a file ferry reads are no outage (review 46).
 */
const SOCKET_CONNECT_CODES: ReadonlySet<string> = new Set(['ENOENT', 'EACCES']);

function socketConnectFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 4; depth += 1) {
    const { code, syscall } = e as { code?: unknown; syscall?: unknown };
    if (syscall === 'connect' && typeof code === 'string' && SOCKET_CONNECT_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Prisma's P2028 when its `maxWait` passed before the pool lent a connection: no session was
 * opened, as P2024 or ferry's own "no connection for a transaction within" (transactionLimits
 * startWithin): FERRY_DATABASE_UNAVAILABLE, so sessionGone reads it as such (review 103: the inbox
 * worker charged a handler that never ran). P2028's other meanings stay FERRY_TIMEOUT.
 */
const NO_CONNECTION_WITHIN_MAX_WAIT = /Unable to start a transaction in the given time/;

function translationOf(facts: Facts): Translation {
  if (ENDED_TRANSACTION.test(facts.message)) return INVALID;
  if (NO_CONNECTION_WITHIN_MAX_WAIT.test(facts.message)) return UNAVAILABLE;
  if (facts.socketConnect) return UNAVAILABLE;
  for (const code of facts.codes) {
    const found = TRANSLATIONS[code] ?? TRANSLATIONS[code.slice(0, 2)];
    if (found) return found;
  }
  if (facts.codes.some((c) => /^P10\d\d$/.test(c))) return UNAVAILABLE;
  return MESSAGE_TRANSLATIONS.find(([pattern]) => pattern.test(facts.message))?.[1] ?? UNKNOWN;
}

let logger: Logger | undefined;

/**
 * Translates a PostgreSQL / driver / Prisma error into a FerryError at the boundary; FerryErrors
 * pass through unchanged. `operation` names what failed, e.g. `outbox emit`. The driver's text may
 * quote a row's values, so it goes through `redact` (the component's redactor, else the built-in
 * rules) like every error text ferry stores or logs: the message (the driver's message as one
 * bounded line) and the cause (a copy of the original error of the same class, codes and fields
 * kept, its texts redacted: redactedCopy). details: operation, sqlState, and constraint / column /
 * table when PostgreSQL named them. An unclassified failure is logged as a warning to `log`, the
 * component's logger (ferry.db's default logger when none is given).
 */
export function translateDbError(
  error: unknown,
  operation: string,
  redact: Redactor = redactText,
  log?: Logger,
): FerryError {
  if (error instanceof FerryError) return error;
  const facts = factsOf(error);
  const translation = translationOf(facts);
  const details: Record<string, unknown> = { operation, sqlState: facts.sqlState };
  if (facts.sqlState === null && facts.codes[0] !== undefined) details.driverCode = facts.codes[0];
  if (facts.constraint !== null) details.constraint = facts.constraint;
  if (facts.column !== null) details.column = facts.column;
  if (facts.table !== null) details.table = facts.table;
  const message = redactLine(facts.message, MAX_STORED_ERROR_CHARS, redact);
  if (translation === UNKNOWN) {
    const warnTo = log ?? (logger ??= defaultLogger('ferry.db'));
    warnTo.warn({ operation, sqlState: details.sqlState, err: message }, 'unclassified database error');
  }
  const hint = translation === SCHEMA ? SCHEMA_HINT : '';
  return new FerryError(translation.code, `${operation} failed: ${message}${hint}`, {
    cause: redactedCopy(error, redact, sensitiveKeyRule(redact)),
    retriable: translation.retriable,
    details,
  });
}

/**
 * Runs one database operation, translating its failure (redacted by `redact`, an unclassified one
 * logged to `log`: see translateDbError).
 */
export async function dbCall<T>(
  operation: string,
  work: () => Promise<T>,
  redact?: Redactor,
  log?: Logger,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateDbError(error, operation, redact, log);
  }
}

/**
 * The same executor with every failure translated (`operation` names the component, e.g.
 * `inbox admin`; `redact` its redactor; `log` its logger), for components that hand their executor
 * to many SQL modules.
 */
export function withTranslation(
  db: SqlExecutor,
  operation: string,
  redact?: Redactor,
  log?: Logger,
): SqlExecutor {
  const call = <T>(work: () => Promise<T>): Promise<T> => dbCall(operation, work, redact, log);
  return {
    // Read through: on an application's pg client it is the client's status now (perCallPgClient).
    get inTransaction() {
      return db.inTransaction;
    },
    query: (text, values, options) => call(() => db.query(text, values, options)),
    execute: (text, values, options) => call(() => db.execute(text, values, options)),
    transaction: (work, options) =>
      call(() => db.transaction((tx) => work(withTranslation(tx, operation, redact, log)), options)),
  };
}
