import { FerryConfigError } from '../errors';
import type { SqlExecutor } from '../sql/executor';
import type { MigrationFile } from './migrationFiles';

/** ferry's own applied migrations; nothing else is recorded here. */
export const FERRY_MIGRATIONS_TABLE = 'ferry_schema_migrations';
/** Where an application's folder applied with ferry's migrator is recorded unless it names a table. */
export const DEFAULT_APP_MIGRATIONS_TABLE = 'app_migrations';
/** Before 0.2, ferry's and the applications' migrations shared this table. */
export const LEGACY_MIGRATIONS_TABLE = 'ferry_migrations';

/**
 * The table that records a folder's migrations: ferry's own table for ferry's folder, else
 * `table` (default `app_migrations`). Identifiers cannot be bound, so the name is checked here.
 */
export function migrationsTableFor(options: { migrationsDir?: string; table?: string }): string {
  if (options.migrationsDir === undefined) {
    if (options.table !== undefined)
      throw new FerryConfigError('table', 'is only for an application folder (migrationsDir)');
    return FERRY_MIGRATIONS_TABLE;
  }
  const table = options.table ?? DEFAULT_APP_MIGRATIONS_TABLE;
  if (typeof table !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(table)) {
    throw new FerryConfigError('table', `must be a lower-case SQL identifier, got ${JSON.stringify(table)}`);
  }
  if (table === FERRY_MIGRATIONS_TABLE) {
    throw new FerryConfigError('table', `${FERRY_MIGRATIONS_TABLE} holds ferry's own migrations only`);
  }
  return table;
}

/**
 * `table` (a name migrationsTableFor let through: lower-case letters, digits and underscores) as
 * SQL: quoted, so a name PostgreSQL reserves (`order`, `user`) names the table and is no syntax
 * error. Every statement on a migrations table, and `to_regclass`, takes it so.
 */
export function quotedTable(table: string): string {
  return `"${table}"`;
}

export function createTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${quotedTable(table)} (
  name text PRIMARY KEY,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;
}

const PRESENT = `SELECT to_regclass($1) IS NOT NULL AS present`;
const ADOPT = (table: string) => `
  INSERT INTO ${quotedTable(table)} (name, checksum, applied_at)
  SELECT l.name, l.checksum, l.applied_at FROM ${LEGACY_MIGRATIONS_TABLE} l
  WHERE (l.name, l.checksum) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;

async function exists(tx: SqlExecutor, table: string): Promise<boolean> {
  const [row] = await tx.query<{ present: boolean }>(PRESENT, [quotedTable(table)]);
  return row?.present ?? false;
}

/**
 * Creates `table` if missing. When it is new and the legacy shared table exists, the rows of
 * this folder's files (same name and checksum) are copied over with their applied_at, so an
 * upgraded database applies nothing twice. The legacy table is left as it was (never read or
 * written again) so an older ferry still running during a rolling deploy keeps working; drop it
 * once none is left. Call under the migration lock.
 */
export async function ensureMigrationsTable(
  tx: SqlExecutor,
  table: string,
  files: readonly MigrationFile[],
): Promise<void> {
  const isNew = !(await exists(tx, table));
  await tx.execute(createTableSql(table));
  if (!isNew || table === LEGACY_MIGRATIONS_TABLE || !(await exists(tx, LEGACY_MIGRATIONS_TABLE))) return;
  await tx.execute(ADOPT(table), [files.map((f) => f.name), files.map((f) => f.checksum)]);
}
