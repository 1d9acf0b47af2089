import { backoffDelay } from '../backoff';
import { FerryConfigError, FerryError } from '../errors';
import { executorOption, integerOption, knownKeysOption, received, type OptionKeys } from '../optionChecks';
import { withTranslation } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { sqlStateOf } from '../sql/sqlState';
import { withDeadlines } from '../sql/statementDeadline';
import { MAX_TIMEOUT_MS } from '../sql/transactionLimits';
import {
  assertMigrationUnchanged,
  loadMigrationFiles,
  unrecognizedMigrations,
  type MigrationFile,
} from './migrationFiles';
import { ensureMigrationsTable, migrationsTableFor, quotedTable } from './migrationsTable';

/** Advisory lock key shared by every ferry migrator ('ferrymig' as a 64-bit number). */
const MIGRATION_LOCK_KEY = '7378151096495024487';

/**
 * Takes the migrators' lock, waiting for another migrator under the transaction's deadline only: a
 * `lock_timeout` set on the role or database (lifted for this transaction first, in the subquery)
 * failed a second pod at once while the first ran a migration longer than it (review 113). Each
 * migration's own statements wait for their locks at most `lockTimeoutMs` (applyOne).
 */
const LOCK = `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)
  FROM (SELECT set_config('lock_timeout', '0', true)) AS unbounded`;

export interface MigrateOptions {
  /**
   * An application's folder in Prisma's format. Without it, ferry's own migrations (shipped in
   * @ferry/core, or FERRY_MIGRATIONS_DIR) are applied and recorded in `ferry_schema_migrations`.
   */
  migrationsDir?: string;
  /** The table recording `migrationsDir`'s migrations. Default `app_migrations`. */
  table?: string;
  /**
   * Deadline for each migration: its transaction, COMMIT included, and its tries when it waits for
   * a lock (`lockTimeoutMs`). Default 120,000 ms; 0 for none. A transaction that has not ended
   * within it (a database gone silent) fails with a retriable FERRY_TIMEOUT; one whose COMMIT was
   * sent and whose answer was lost asks PostgreSQL whether it landed (committed: migrate goes on;
   * no answer: FERRY_OUTCOME_UNKNOWN, run migrate again once the database answers: it skips what
   * was applied).
   */
  timeoutMs?: number;
  /**
   * How long one try of a migration waits for a lock another session holds (PostgreSQL's
   * `lock_timeout` for the migration's statements). While DDL waits for its lock, every later
   * writer of that table queues behind it: a wait past this rolls the try back (the queue goes
   * on), and the migration is tried again after a back-off until `timeoutMs`. Default 2,000 ms.
   */
  lockTimeoutMs?: number;
  /**
   * Stops the call between migrations once it aborts (an operator's Ctrl-C): the migration in
   * flight finishes (commits, or fails and rolls back, as without it), no other starts, and the
   * result names the ones not reached (`notAttempted`). Without it every pending migration runs.
   */
  signal?: AbortSignal;
}

const KEYS = {
  migrationsDir: true,
  table: true,
  timeoutMs: true,
  lockTimeoutMs: true,
  signal: true,
} as const satisfies OptionKeys<MigrateOptions>;

/**
 * Bounds of `timeoutMs`: 0 (no deadline) up to what PostgreSQL's `statement_timeout` and a Node
 * timer hold. `ferry migrate --statement-timeout` takes the same.
 */
export const MIGRATE_TIMEOUT_BOUNDS = [0, MAX_TIMEOUT_MS] as const;
const LOCK_TIMEOUT_DEFAULT_MS = 2_000;
/** The longest wait for a pooled connection for one migration's transaction. */
const MAX_WAIT_MS = 10_000;
/** SQLSTATE lock_not_available: lock_timeout passed. */
const LOCK_NOT_AVAILABLE = '55P03';
/** SQLSTATE insufficient_privilege: a GRANT the migrating role lacks. */
const INSUFFICIENT_PRIVILEGE = '42501';

export interface MigrateResult {
  /** Migrations this call applied, in order. */
  applied: string[];
  /** Migrations that were already applied (by an earlier or a concurrent run). */
  alreadyApplied: string[];
  /**
   * Set when `signal` stopped the call before its last migration: the migrations it did not look
   * at (pending, or applied meanwhile by a concurrent run), in order. Run migrate again for them.
   */
  notAttempted?: string[];
  /**
   * Set when the migrations table records migrations the folder has no file for, in name order: a
   * newer version applied them (a rollback mid-deploy, an older pod still running). They are left
   * as they are and fail nothing; `ferry migrate` names them.
   */
  unrecognized?: string[];
}

/**
 * Applies pending migrations in name order, each in its own transaction that first
 * takes a transaction-scoped advisory lock, so concurrent migrators serialize and each
 * file runs once. A failing file rolls back and is reported by name; files before it stay.
 * Other database failures are translated (an unreachable database is FERRY_DATABASE_UNAVAILABLE).
 */
export async function migrate(target: SqlExecutor, options: MigrateOptions = {}): Promise<MigrateResult> {
  // Every option checked before the database is reached.
  executorOption('db', target);
  options = knownKeysOption('', options, KEYS);
  // 0: no limit, as PostgreSQL's (documented); else each transaction's deadline.
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs ?? 120_000, ...MIGRATE_TIMEOUT_BOUNDS);
  const lockTimeoutMs = integerOption(
    'lockTimeoutMs',
    options.lockTimeoutMs ?? LOCK_TIMEOUT_DEFAULT_MS,
    1,
    3_600_000,
  );
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new FerryConfigError('signal', `must be an AbortSignal, got ${received(signal)}`);
  }
  // Each transaction as a whole within its deadline, COMMIT included: one whose COMMIT answer was
  // lost asks PostgreSQL whether it landed (withDeadlines). The wait for a connection is part of
  // the deadline, at most 10 s. READ COMMITTED whatever the database's default: under REPEATABLE
  // READ or SERIALIZABLE the snapshot is taken by the advisory lock's statement, before a
  // concurrent migrator's commit, so a migrator that waited for the lock read the migrations table
  // as it was before and ran an applied migration again (review 113). READ WRITE too where the
  // client can say so (TransactionOptions.isolation; not Prisma): a default_transaction_read_only.
  const txOptions = {
    timeoutMs,
    maxWaitMs: timeoutMs === 0 ? MAX_WAIT_MS : Math.min(timeoutMs, MAX_WAIT_MS),
    isolation: 'read committed' as const,
  };
  const db = withTranslation(timeoutMs === 0 ? target : withDeadlines(target, timeoutMs), 'migrate');
  const table = migrationsTableFor(options);
  const files = loadMigrationFiles(options.migrationsDir);
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  // Always reach the database, so a bad URL fails even when nothing is pending.
  try {
    await db.transaction(async (tx) => {
      await tx.execute(LOCK);
      await ensureMigrationsTable(tx, table, files);
    }, txOptions);
  } catch (error) {
    // A schema the connection cannot create in (a search_path naming one that does not exist)
    // reads as ferry's schema missing, whose hint is to run migrate (review 44), and a missing
    // GRANT as a retriable outage (review 113): migrate's own failure says what failed instead.
    const schemaMissing = error instanceof FerryError && error.code === 'FERRY_SCHEMA_NOT_READY';
    if (!schemaMissing && !hasSqlState(error, INSUFFICIENT_PRIVILEGE)) throw error;
    throw new FerryError(
      'FERRY_MIGRATION_FAILED',
      `migrate could not create its table ${table}: ${describe(error)} (the connection's search_path must name a schema that exists and in which the role has CREATE)`,
      { cause: error },
    );
  }
  for (const [index, file] of files.entries()) {
    if (signal?.aborted === true) {
      result.notAttempted = files.slice(index).map((left) => left.name);
      break;
    }
    const applied = await triedUntil(timeoutMs === 0 ? Infinity : timeoutMs, file, () =>
      db.transaction(async (tx) => applyOne(tx, table, file, lockTimeoutMs), txOptions),
    ).catch((error: unknown) => {
      throw failedPartway(refusedPrivilege(error, file), result, files.slice(index + 1));
    });
    (applied ? result.applied : result.alreadyApplied).push(file.name);
  }
  // Read once the files were, so a ledger the role may not read fails on its migration as before.
  const recorded = await db.query<{ name: string }>(`SELECT name FROM ${quotedTable(table)}`);
  const unrecognized = unrecognizedMigrations(
    recorded.map((row) => row.name),
    files,
  );
  if (unrecognized.length > 0) result.unrecognized = unrecognized;
  return result;
}

/**
 * A migration's failure with what this run did before it (`details.applied`, `alreadyApplied`)
 * and the migrations after it, not attempted (`details.notAttempted`): migrations applied before
 * the failing one stay committed, and the caller (`ferry migrate`) says which.
 */
function failedPartway(error: unknown, result: MigrateResult, left: readonly MigrationFile[]): unknown {
  if (!(error instanceof FerryError)) return error;
  return new FerryError(error.code, error.message, {
    cause: error,
    retriable: error.retriable,
    details: {
      ...error.details,
      applied: [...result.applied],
      alreadyApplied: [...result.alreadyApplied],
      notAttempted: left.map((file) => file.name),
    },
  });
}

/**
 * Runs `attempt` again while it fails waiting for a lock (lock_timeout), after a capped
 * exponential back-off with jitter, until `budgetMs` would pass: then the migration fails, rolled
 * back, naming the lock.
 */
async function triedUntil<T>(budgetMs: number, file: MigrationFile, attempt: () => Promise<T>): Promise<T> {
  const started = performance.now();
  for (let failures = 0; ; failures += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!waitedForLock(error)) throw error;
      const delay = backoffDelay(failures + 1, {
        initialMs: 100,
        maxMs: 5_000,
        multiplier: 2,
        jitter: 'full',
      });
      if (performance.now() - started + delay >= budgetMs) {
        throw new FerryError(
          'FERRY_MIGRATION_FAILED',
          `migration ${file.name} failed and was rolled back: it could not take a lock other sessions ` +
            `hold (tried ${failures + 1} times within ${budgetMs} ms; long transactions on its tables)`,
          { cause: error, details: { migration: file.name } },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Whether the failure, or a cause of it (the migration's FerryError, its translation), is lock_timeout's. */
function waitedForLock(error: unknown): boolean {
  return hasSqlState(error, LOCK_NOT_AVAILABLE);
}

/** Whether `error`, or a cause of it (a FerryError, its translation), carries SQLSTATE `state`. */
function hasSqlState(error: unknown, state: string): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; depth += 1) {
    if (sqlStateOf(e) === state) return true;
    if (e instanceof FerryError && e.details?.sqlState === state) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A missing GRANT met by `file`'s transaction outside its SQL (the migrations table's lock, read or
 * record, on a table the role may not write) as the failure of that migration, not retriable: the
 * runtime's translation, a retriable FERRY_DATABASE_UNAVAILABLE (transports hold deliveries through
 * it), had a deploy step retry for an outage that was a GRANT (review 113). Its SQL's own failure
 * is FERRY_MIGRATION_FAILED already.
 */
function refusedPrivilege(error: unknown, file: MigrationFile): unknown {
  if (!hasSqlState(error, INSUFFICIENT_PRIVILEGE)) return error;
  if (error instanceof FerryError && error.code === 'FERRY_MIGRATION_FAILED') return error;
  return new FerryError(
    'FERRY_MIGRATION_FAILED',
    `migration ${file.name} failed and was rolled back: ${describe(error)} (a GRANT the migrating role lacks)`,
    { cause: error, details: { migration: file.name } },
  );
}

async function applyOne(
  tx: SqlExecutor,
  table: string,
  file: MigrationFile,
  lockTimeoutMs: number,
): Promise<boolean> {
  // Concurrent migrators wait for each other here, under the transaction's own deadline only.
  await tx.execute(LOCK);
  const rows = await tx.query<{ checksum: string }>(
    `SELECT checksum FROM ${quotedTable(table)} WHERE name = $1`,
    [file.name],
  );
  const existing = rows[0];
  if (existing) {
    assertMigrationUnchanged(file, existing.checksum);
    return false;
  }
  try {
    await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
    await tx.execute(file.sql);
  } catch (cause) {
    throw new FerryError(
      'FERRY_MIGRATION_FAILED',
      `migration ${file.name} failed and was rolled back: ${describe(cause)}`,
      {
        cause,
        details: { migration: file.name },
      },
    );
  }
  await tx.execute(`INSERT INTO ${quotedTable(table)} (name, checksum) VALUES ($1, $2)`, [
    file.name,
    file.checksum,
  ]);
  return true;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
