import {
  FerryConfigError,
  FerryValidationError,
  isFerryError,
  REPLAY_PAYLOAD_PURGED,
  type FerryError,
} from '@ferry/core';
import { describeError } from '@ferry/core/transport';
import { CommanderError } from 'commander';

/** A command-line mistake: exit code 2, code FERRY_USAGE. */
export class UsageError extends Error {
  readonly code = 'FERRY_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface ErrorAnswer {
  readonly code: string;
  readonly message: string;
  readonly hint: string;
  /** 1 failure, 2 usage. */
  readonly exitCode: 1 | 2;
}

/** What an operator does next, by code; one table for every command. */
const HINTS: Readonly<Record<string, string>> = {
  FERRY_USAGE: 'see `ferry <command> --help`',
  FERRY_SCHEMA_NOT_READY:
    'tables or migrations are missing: run `ferry migrate` (with the --migrations-dir and --table given to check)',
  FERRY_DATABASE_UNAVAILABLE:
    'check --database-url (or FERRY_DATABASE_URL / DATABASE_URL) and that PostgreSQL is up',
  FERRY_DATABASE_ERROR:
    'PostgreSQL refused the statement (its message says why; e.g. the database in --database-url must exist)',
  FERRY_TIMEOUT: 'the database did not answer in time; retry, or check its load',
  FERRY_OUTCOME_UNKNOWN: 'the change may have been applied: list before acting again',
  FERRY_VALIDATION_FAILED: 'a value was refused; see `ferry <command> --help`',
  FERRY_NOT_FOUND: 'check the id and the scope (--tenant / --global)',
  FERRY_STATE_CONFLICT: 'the record moved on: list it again and act on its current status and version',
  FERRY_REPLAY_CONFLICT: 'that request id was used with other arguments: use a new --request-id',
  FERRY_MIGRATION_CHECKSUM_MISMATCH: 'an applied migration was edited: restore the original file',
  FERRY_MIGRATION_FAILED:
    'the failing migration was rolled back; fix the cause and run `ferry migrate` again',
  FERRY_MIGRATIONS_NOT_FOUND: 'check --migrations-dir / --after',
};

const GENERIC_HINT = 'see the FERRY error table in the @ferry/core README';

/** A replay refused because its source's payload was purged: no later state brings it back (HINTS' conflict hint). */
const PURGED_PAYLOAD_HINT =
  "the receipt's payload was purged (inbox purge-payloads), so no new replay can be made of it; " +
  'a replay made before the purge answers duplicate to its --request-id; else have the producer send the message again';

function hintOf(error: FerryError): string {
  if (error.code === 'FERRY_STATE_CONFLICT' && error.details.reason === REPLAY_PAYLOAD_PURGED) {
    return PURGED_PAYLOAD_HINT;
  }
  return HINTS[error.code] ?? GENERIC_HINT;
}

/**
 * The flag each value comes from that ferry's library checks and the CLI does not (a tenant id's
 * characters, a list cursor, an actor or reason it can store, a consumer name), by the argument
 * or option name core's FerryValidationError / FerryConfigError gives it.
 */
const FLAG_OF: Readonly<Record<string, string>> = {
  tenantId: '--tenant',
  scope: '--tenant', // audit list's scope `tenant:<id>` (--global and --operator name fixed ones)
  cursor: '--cursor',
  actor: '--actor',
  reason: '--reason',
  targetConsumer: '--target-consumer',
  type: '--type',
  key: '--key',
  action: '--action',
  after: '--after',
  table: '--table',
  migrationsDir: '--migrations-dir',
};

/**
 * Core's refusal of a value the operator gave (one FLAG_OF names) as a usage error naming the
 * flag: core checks its arguments and options before any statement, so nothing was changed and
 * the same command can only fail the same way. Anything else: undefined.
 */
function operatorMistake(error: unknown, sources: Readonly<Record<string, string>>): string | undefined {
  let refused: { name: string; reason: string } | undefined;
  if (error instanceof FerryValidationError) refused = { name: error.field, reason: error.reason };
  if (error instanceof FerryConfigError) {
    refused = { name: error.option, reason: String(error.details.reason ?? error.message) };
  }
  const flag = refused === undefined ? undefined : (sources[refused.name] ?? FLAG_OF[refused.name]);
  if (refused === undefined || flag === undefined) return undefined;
  // A reason naming another option (`is only for an application folder (migrationsDir)`) names its flag.
  let reason = refused.reason;
  for (const [name, other] of Object.entries(FLAG_OF)) reason = reason.replaceAll(`(${name})`, `(${other})`);
  return `${flag} ${reason}`;
}

/**
 * Every failure as one answer: a FERRY code, a message and a hint. `applied`: something was
 * changed before it (a later batch failed), so no failure is a usage error (exit 2 promises that
 * nothing was). `sources`: where a refused value came from when no flag gave it (`actor`:
 * `FERRY_ACTOR`), named instead of its flag.
 */
export function answerFor(
  error: unknown,
  applied = false,
  sources: Readonly<Record<string, string>> = {},
): ErrorAnswer {
  if (error instanceof UsageError) return usage(error.message);
  if (error instanceof CommanderError) return usage(error.message.replace(/^error: /, ''));
  const mistake = applied ? undefined : operatorMistake(error, sources);
  if (mistake !== undefined) return usage(mistake);
  if (isFerryError(error)) {
    return {
      code: error.code,
      message: error.message,
      hint: hintOf(error),
      exitCode: 1,
    };
  }
  // Redacted (a driver's message may quote a URL with its password) and never throwing (a
  // null-prototype object, a toString that throws): core's one description of a thrown value.
  return { code: 'FERRY_UNEXPECTED', message: describeError(error), hint: GENERIC_HINT, exitCode: 1 };
}

function usage(message: string): ErrorAnswer {
  return { code: 'FERRY_USAGE', message, hint: HINTS.FERRY_USAGE as string, exitCode: 2 };
}
