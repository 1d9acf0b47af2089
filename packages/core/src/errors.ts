/**
 * Every error ferry throws is a FerryError with a stable string `code`, a `retriable`
 * flag and the underlying `cause`. Codes never change meaning; new failures get new codes.
 */
export const ERROR_CODES = {
  FERRY_CONFIG_INVALID: {
    retriable: false,
    summary: 'an option is missing, out of bounds or of the wrong type',
  },
  FERRY_SCHEMA_NOT_READY: {
    retriable: false,
    summary: 'a table, column or migration ferry needs is missing',
  },
  FERRY_MIGRATION_FAILED: { retriable: false, summary: 'a migration file failed and was rolled back' },
  FERRY_MIGRATION_CHECKSUM_MISMATCH: {
    retriable: false,
    summary: 'an applied migration file was edited afterwards',
  },
  FERRY_MIGRATIONS_NOT_FOUND: { retriable: false, summary: 'the migrations folder is missing or unreadable' },
  FERRY_DATABASE_UNAVAILABLE: {
    retriable: true,
    summary: 'PostgreSQL could not be reached or refused the work',
  },
  FERRY_DATABASE_ERROR: {
    retriable: true,
    summary: 'PostgreSQL failed with an unclassified error (logged with its SQLSTATE)',
  },
  FERRY_VALIDATION_FAILED: {
    retriable: false,
    summary: 'an envelope or input failed validation (also PostgreSQL SQLSTATE classes 22 and 23)',
  },
  FERRY_CLOSED: { retriable: false, summary: 'the component was closed and takes no more work' },
  FERRY_TIMEOUT: { retriable: true, summary: 'an operation did not finish within its deadline' },
  FERRY_OUTCOME_UNKNOWN: {
    retriable: false,
    summary:
      'a COMMIT was sent and its answer lost: the change may have been applied; look before acting again',
  },
  FERRY_LEASE_LOST: { retriable: true, summary: 'a claim lease expired or was taken over' },
  FERRY_PUBLISH_FAILED: { retriable: true, summary: 'a broker did not confirm a message' },
  FERRY_PERMANENT_FAILURE: { retriable: false, summary: 'a failure that retrying cannot fix' },
  FERRY_ADMISSION_REJECTED: { retriable: true, summary: 'the approximate backlog limit refused new work' },
  FERRY_PAYLOAD_TOO_LARGE: { retriable: false, summary: 'a payload is over its byte limit' },
  FERRY_STATE_CONFLICT: {
    retriable: false,
    summary: 'a record is not in the state or version the operation expects',
  },
  FERRY_REPLAY_CONFLICT: { retriable: false, summary: 'a replay request id was reused with other arguments' },
  FERRY_FINGERPRINT_CONFLICT: {
    retriable: false,
    summary: 'a message id was reused with a different payload',
  },
  FERRY_HANDLER_MISSING: { retriable: false, summary: 'no handler is registered for a consumer' },
  FERRY_NOT_FOUND: { retriable: false, summary: 'no record with that id exists in the selected scope' },
  FERRY_GLOBAL_SCOPE_REJECTED: {
    retriable: false,
    summary: "a global (tenant-less) message was offered but global: 'shared' is not configured",
  },
  FERRY_INVALID_PAYLOAD: { retriable: false, summary: 'a handler rejected the stored payload as invalid' },
  FERRY_UNSUPPORTED_SCHEMA: { retriable: false, summary: 'a handler does not support the message schema' },
  FERRY_WRAPPER_MISUSE: {
    retriable: false,
    summary: 'a handler-context wrapper skipped, repeated or swallowed next()',
  },
  FERRY_TRANSPORT_ERROR: { retriable: true, summary: 'a broker connection or channel failed' },
  FERRY_TRANSACTION_MISUSE: {
    retriable: false,
    summary: "a handler ended, released or kept using ferry's handler transaction",
  },
} as const satisfies Record<string, { retriable: boolean; summary: string }>;

export type FerryErrorCode = keyof typeof ERROR_CODES;

export interface FerryErrorOptions {
  cause?: unknown;
  retriable?: boolean;
  details?: Readonly<Record<string, unknown>>;
}

export class FerryError extends Error {
  readonly code: FerryErrorCode;
  readonly retriable: boolean;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: FerryErrorCode, message: string, options: FerryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? ERROR_CODES[code].retriable;
    this.details = options.details ?? {};
  }
}

/** An option failed resolution; `option` names it as the user wrote it (e.g. `retry.maxDelay`). */
export class FerryConfigError extends FerryError {
  readonly option: string;
  constructor(option: string, reason: string) {
    super('FERRY_CONFIG_INVALID', `invalid option ${option}: ${reason}`, { details: { option, reason } });
    this.option = option;
  }
}

/**
 * Input failed validation before any SQL ran; `field` names the offending field. `rule`
 * (also `details.rule`), when set, is a stable reason from TRANSPORT_REJECT_REASONS
 * (`invalid_text`, `headers_too_large`, `payload_too_deep`, `reserved_header`, …).
 */
export class FerryValidationError extends FerryError {
  readonly field: string;
  readonly reason: string;
  readonly rule: string | undefined;
  constructor(
    field: string,
    reason: string,
    code: FerryErrorCode = 'FERRY_VALIDATION_FAILED',
    rule?: string,
  ) {
    super(code, `invalid ${field}: ${reason}`, {
      details: rule === undefined ? { field, reason } : { field, reason, rule },
    });
    this.field = field;
    this.reason = reason;
    this.rule = rule;
  }
}

export class FerrySchemaError extends FerryError {
  readonly missing: readonly string[];
  /** `folder`: an application's migrations folder that was checked, instead of ferry's own. */
  constructor(
    missing: readonly string[],
    folder?: { readonly migrationsDir: string; readonly table: string },
  ) {
    const list = missing.join(', ');
    super(
      'FERRY_SCHEMA_NOT_READY',
      folder === undefined
        ? `ferry's schema is not ready; missing: ${list}. Run \`ferry migrate\` (or migrate() from @ferry/core).`
        : `the schema of ${folder.migrationsDir} is not ready; missing: ${list}. Run ` +
            `\`ferry migrate --migrations-dir ${shellWord(folder.migrationsDir)} --table ${folder.table}\` ` +
            '(or migrate() with the same migrationsDir and table).',
      { details: folder === undefined ? { missing } : { missing, ...folder } },
    );
    this.missing = missing;
  }
}

/**
 * What a consumer's readiness probe, `check()`, rejects with while the consumer is not attached
 * (`FERRY_TRANSPORT_ERROR`, retriable): before it first attached, and after it lost its
 * connection (or session) until it re-attached. `consumer` names it (transport, consumer name,
 * queue or group); `reason` says why, naming the last failure (also the `cause`).
 */
export class ConsumerDisconnectedError extends FerryError {
  readonly consumer: string;
  readonly reason: string;
  constructor(consumer: string, reason: string, cause?: unknown) {
    super('FERRY_TRANSPORT_ERROR', `${consumer} is not connected: ${reason}`, {
      ...(cause === undefined ? {} : { cause }),
      details: { consumer, reason },
    });
    this.consumer = consumer;
    this.reason = reason;
  }
}

/** `text` as one shell word: as it is when plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export function isFerryError(error: unknown, code?: FerryErrorCode): error is FerryError {
  return error instanceof FerryError && (code === undefined || error.code === code);
}
