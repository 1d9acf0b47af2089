import { FerryError } from '../errors';
import type { SqlExecutor } from '../sql/executor';
import { loadMigrationFiles, type MigrationFile } from './migrationFiles';

/** Advisory lock key shared by every ferry migrator ('ferrymig' as a 64-bit number). */
const MIGRATION_LOCK_KEY = '7378151096495024487';

const ENSURE_TABLE = `
  CREATE TABLE IF NOT EXISTS ferry_migrations (
    name text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;
const LOCK = `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}::bigint)`;
const APPLIED = `SELECT name, checksum FROM ferry_migrations`;
const RECORD = `INSERT INTO ferry_migrations (name, checksum) VALUES ($1, $2)`;

export interface MigrateOptions {
  /** Folder in Prisma's format; defaults to ferry's own prisma/migrations. */
  migrationsDir?: string;
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
 */
export async function migrate(db: SqlExecutor, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = loadMigrationFiles(options.migrationsDir);
  const txOptions = { timeoutMs: options.timeoutMs ?? 120_000, maxWaitMs: 10_000 };
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  // Always reach the database, so a bad URL fails even when nothing is pending.
  await db.transaction(async (tx) => {
    await tx.execute(LOCK);
    await tx.execute(ENSURE_TABLE);
  }, txOptions);
  for (const file of files) {
    const applied = await db.transaction(async (tx) => applyOne(tx, file), txOptions);
    (applied ? result.applied : result.alreadyApplied).push(file.name);
  }
  return result;
}

async function applyOne(tx: SqlExecutor, file: MigrationFile): Promise<boolean> {
  await tx.execute(LOCK);
  await tx.execute(ENSURE_TABLE);
  const rows = await tx.query<{ name: string; checksum: string }>(APPLIED);
  const existing = rows.find((row) => row.name === file.name);
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
  await tx.execute(RECORD, [file.name, file.checksum]);
  return true;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
