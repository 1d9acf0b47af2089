import { FerryError } from '../errors';
import { withTranslation } from '../sql/dbErrors';
import type { SqlExecutor } from '../sql/executor';
import { loadMigrationFiles, type MigrationFile } from './migrationFiles';
import { ensureMigrationsTable, migrationsTableFor } from './migrationsTable';

/** Advisory lock key shared by every ferry migrator ('ferrymig' as a 64-bit number). */
const MIGRATION_LOCK_KEY = '7378151096495024487';

const LOCK = `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)`;

export interface MigrateOptions {
  /**
   * An application's folder in Prisma's format. Without it, ferry's own migrations (shipped in
   * @ferry/core, or FERRY_MIGRATIONS_DIR) are applied and recorded in `ferry_schema_migrations`.
   */
  migrationsDir?: string;
  /** The table recording `migrationsDir`'s migrations. Default `app_migrations`. */
  table?: string;
  /** Deadline for each migration's transaction. Default 120,000 ms. */
  timeoutMs?: number;
}

export interface MigrateResult {
  /** Migrations this call applied, in order. */
  applied: string[];
  /** Migrations that were already applied (by an earlier or a concurrent run). */
  alreadyApplied: string[];
}

/**
 * Applies pending migrations in name order, each in its own transaction that first
 * takes a transaction-scoped advisory lock, so concurrent migrators serialize and each
 * file runs once. A failing file rolls back and is reported by name; files before it stay.
 * Other database failures are translated (an unreachable database is FERRY_DATABASE_UNAVAILABLE).
 */
export async function migrate(target: SqlExecutor, options: MigrateOptions = {}): Promise<MigrateResult> {
  const db = withTranslation(target, 'migrate');
  const table = migrationsTableFor(options);
  const files = loadMigrationFiles(options.migrationsDir);
  const txOptions = { timeoutMs: options.timeoutMs ?? 120_000, maxWaitMs: 10_000 };
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  // Always reach the database, so a bad URL fails even when nothing is pending.
  await db.transaction(async (tx) => {
    await tx.execute(LOCK);
    await ensureMigrationsTable(tx, table, files);
  }, txOptions);
  for (const file of files) {
    const applied = await db.transaction(async (tx) => applyOne(tx, table, file), txOptions);
    (applied ? result.applied : result.alreadyApplied).push(file.name);
  }
  return result;
}

async function applyOne(tx: SqlExecutor, table: string, file: MigrationFile): Promise<boolean> {
  await tx.execute(LOCK);
  const rows = await tx.query<{ checksum: string }>(`SELECT checksum FROM ${table} WHERE name = $1`, [
    file.name,
  ]);
  const existing = rows[0];
  if (existing) {
    if (existing.checksum !== file.checksum) {
      throw new FerryError(
        'FERRY_MIGRATION_CHECKSUM_MISMATCH',
        `migration ${file.name} was changed after it was applied`,
        { details: { migration: file.name } },
      );
    }
    return false;
  }
  try {
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
  await tx.execute(`INSERT INTO ${table} (name, checksum) VALUES ($1, $2)`, [file.name, file.checksum]);
  return true;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
