import { FerrySchemaError } from '../errors';
import { booleanOption, executorOption, knownKeysOption, type OptionKeys } from '../optionChecks';
import { dbCall } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { statementTimeoutOption, withDeadlines } from '../sql/statementDeadline';
import { FERRY_TABLES, OUTBOX_COLUMNS, type RequiredTables } from './ferryTables';
import { assertMigrationUnchanged, loadMigrationFiles, unrecognizedMigrations } from './migrationFiles';
import { migrationsTableFor, quotedTable } from './migrationsTable';

export type { RequiredTables } from './ferryTables';

export interface CheckSchemaOptions {
  /**
   * Tables and columns to require. Checking ferry's own migrations (no `migrationsDir`, and
   * `requireAllMigrations` not false), ferry's tables and the columns it uses are required too
   * (FERRY_TABLES): a ledger that records every migration says nothing of a table dropped since.
   */
  tables?: RequiredTables;
  /** Also require every migration file to be recorded as applied. Default true. */
  requireAllMigrations?: boolean;
  /** An application's folder to check instead of ferry's own (see MigrateOptions). */
  migrationsDir?: string;
  /** The table recording `migrationsDir`'s migrations. Default `app_migrations`. */
  table?: string;
  /**
   * Deadline of each statement the check sends (outside the caller's transaction), as the admins'
   * option: past it the check fails with a retriable FERRY_TIMEOUT (or FERRY_DATABASE_UNAVAILABLE),
   * instead of waiting for ever on a database that went silent. Default 30,000 ms, 100 to
   * 3,600,000.
   */
  statementTimeoutMs?: number;
}

export interface CheckSchemaResult {
  /**
   * Migrations the migrations table records that the folder has no file for, in name order: a
   * newer version applied them (a rollback mid-deploy). They fail nothing; `ferry check` names
   * them. Empty when none, or with `requireAllMigrations: false` (the table is not read).
   */
  unrecognized: string[];
}

const KEYS = {
  tables: true,
  requireAllMigrations: true,
  migrationsDir: true,
  table: true,
  statementTimeoutMs: true,
} as const satisfies OptionKeys<CheckSchemaOptions>;

/**
 * The columns of each named table where search_path finds it, as every ferry statement (all
 * unqualified) and the migrations table's to_regclass do: read in current_schema() instead, ferry's
 * tables in a later schema of search_path were "missing" while every statement reached them
 * (review 115). quote_ident: a name is exact, as a table_name of information_schema was.
 */
const COLUMNS = `
  SELECT t.name AS table_name, a.attname AS column_name
  FROM unnest($1::text[]) AS t(name)
  JOIN pg_attribute a ON a.attrelid = to_regclass(quote_ident(t.name))
  WHERE a.attnum > 0 AND NOT a.attisdropped`;
const TABLE_PRESENT = `SELECT to_regclass($1) IS NOT NULL AS present`;

/**
 * Verifies, without changing anything, that ferry's schema is in place. Throws
 * FerrySchemaError (code FERRY_SCHEMA_NOT_READY) listing everything missing:
 * `table:<name>`, `column:<table>.<column>`, `migration:<name>`; a database failure is
 * translated (an unreachable database is FERRY_DATABASE_UNAVAILABLE).
 */
export async function checkSchema(
  db: SqlExecutor,
  options: CheckSchemaOptions = {},
): Promise<CheckSchemaResult> {
  // Every option checked before the database is reached.
  executorOption('db', db);
  options = knownKeysOption('', options, KEYS);
  booleanOption('requireAllMigrations', options.requireAllMigrations ?? true);
  migrationsTableFor(options);
  const timeoutMs = statementTimeoutOption('statementTimeoutMs', options.statementTimeoutMs);
  return verifySchema(withDeadlines(db, timeoutMs), options);
}

/**
 * checkSchema on `db` as it is, for components whose executor already bounds its statements (the
 * inbox's `statementTimeoutMs`, health's `checkTimeoutMs`).
 */
export async function verifySchema(
  db: SqlExecutor,
  options: CheckSchemaOptions = {},
): Promise<CheckSchemaResult> {
  const { missing, unrecognized } = await dbCall('check schema', () => findMissing(db, options));
  if (missing.length === 0) return { unrecognized };
  const { migrationsDir } = options;
  throw new FerrySchemaError(
    missing,
    migrationsDir === undefined ? undefined : { migrationsDir, table: migrationsTableFor(options) },
  );
}

async function findMissing(
  db: SqlExecutor,
  options: CheckSchemaOptions,
): Promise<{ missing: string[]; unrecognized: string[] }> {
  const missing: string[] = [];
  let unrecognized: string[] = [];
  const requireAll = options.requireAllMigrations ?? true;
  const ferrys = requireAll && options.migrationsDir === undefined ? FERRY_TABLES : {};
  const tables = { ...ferrys, ...options.tables };
  const names = Object.keys(tables);
  if (names.length > 0) {
    const rows = await db.query<{ table_name: string; column_name: string }>(COLUMNS, [names]);
    for (const table of names) {
      const present = new Set(rows.filter((r) => r.table_name === table).map((r) => r.column_name));
      if (present.size === 0) {
        missing.push(`table:${table}`);
        continue;
      }
      for (const column of tables[table] ?? []) {
        if (!present.has(column)) missing.push(`column:${table}.${column}`);
      }
    }
  }
  if (requireAll) {
    const table = migrationsTableFor(options);
    const [{ present } = { present: false }] = await db.query<{ present: boolean }>(TABLE_PRESENT, [
      quotedTable(table),
    ]);
    if (!present) missing.push(`table:${table}`);
    const applied = present
      ? new Map(
          (
            await db.query<{ name: string; checksum: string }>(
              `SELECT name, checksum FROM ${quotedTable(table)}`,
            )
          ).map((r) => [r.name, r.checksum]),
        )
      : new Map<string, string>();
    const files = loadMigrationFiles(options.migrationsDir);
    unrecognized = unrecognizedMigrations(applied.keys(), files);
    for (const file of files) {
      const checksum = applied.get(file.name);
      // An edited applied file stops migrate: check says so the same way, not "missing".
      if (checksum === undefined) missing.push(`migration:${file.name}`);
      else assertMigrationUnchanged(file, checksum);
    }
  }
  return { missing, unrecognized };
}

/** The outbox's table as verifyOutboxSchema and relay.verify() require it. */
export const OUTBOX_TABLE: RequiredTables = { outbox_events: OUTBOX_COLUMNS };

/**
 * The outbox table and the columns emit and the relay use, checked without the migration ledger
 * (FERRY_SCHEMA_NOT_READY listing what is missing; never migrates), each statement within
 * `statementTimeoutMs` (default 30,000 ms). For an application that only emits and wants to refuse
 * an unmigrated database at start, as relay.verify() and Inbox.verify() do (@ferry/nestjs's
 * OutboxModule without a relay: review 119).
 */
export async function verifyOutboxSchema(
  db: SqlExecutor,
  options: { readonly statementTimeoutMs?: number } = {},
): Promise<void> {
  options = knownKeysOption('', options, ['statementTimeoutMs']);
  const statementTimeoutMs = (options as { statementTimeoutMs?: number } | null)?.statementTimeoutMs;
  await checkSchema(db, {
    tables: OUTBOX_TABLE,
    requireAllMigrations: false,
    ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
  });
}
