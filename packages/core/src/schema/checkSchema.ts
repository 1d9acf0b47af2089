import { FerrySchemaError } from '../errors';
import type { SqlExecutor } from '../sql/executor';
import { loadMigrationFiles } from './migrationFiles';

/** Columns a component needs, by table: e.g. `{ outbox_events: ['id', 'status'] }`. */
export type RequiredTables = Readonly<Record<string, readonly string[]>>;

export interface CheckSchemaOptions {
  tables?: RequiredTables;
  /** Also require every migration file to be recorded as applied. Default true. */
  requireAllMigrations?: boolean;
  migrationsDir?: string;
}

const COLUMNS = `
  SELECT table_name, column_name FROM information_schema.columns
  WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`;
const MIGRATIONS_TABLE = `SELECT to_regclass('ferry_migrations') IS NOT NULL AS present`;
const APPLIED = `SELECT name FROM ferry_migrations`;

/**
 * Verifies, without changing anything, that ferry's schema is in place. Throws
 * FerrySchemaError (code FERRY_SCHEMA_NOT_READY) listing everything missing:
 * `table:<name>`, `column:<table>.<column>`, `migration:<name>`.
 */
export async function checkSchema(db: SqlExecutor, options: CheckSchemaOptions = {}): Promise<void> {
  const missing: string[] = [];
  const tables = options.tables ?? {};
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
  if (options.requireAllMigrations ?? true) {
    const [{ present } = { present: false }] = await db.query<{ present: boolean }>(MIGRATIONS_TABLE);
    if (!present) missing.push('table:ferry_migrations');
    const applied = present
      ? new Set((await db.query<{ name: string }>(APPLIED)).map((r) => r.name))
      : new Set<string>();
    for (const file of loadMigrationFiles(options.migrationsDir)) {
      if (!applied.has(file.name)) missing.push(`migration:${file.name}`);
    }
  }
  if (missing.length > 0) throw new FerrySchemaError(missing);
}
