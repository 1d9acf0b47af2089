import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FerryError } from '../errors';

export interface MigrationFile {
  /** The folder name, e.g. `0001_outbox`; folders apply in name order. */
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of the SQL text, stored when applied so later edits are detected. */
  readonly checksum: string;
}

/**
 * Throws FERRY_MIGRATION_CHECKSUM_MISMATCH when `file` is not the text recorded as applied
 * (`recordedChecksum`): migrate stops there, and checkSchema reports it the same way.
 */
export function assertMigrationUnchanged(file: MigrationFile, recordedChecksum: string): void {
  if (recordedChecksum === file.checksum) return;
  throw new FerryError(
    'FERRY_MIGRATION_CHECKSUM_MISMATCH',
    `migration ${file.name} was changed after it was applied`,
    {
      details: { migration: file.name },
    },
  );
}

/**
 * The names recorded as applied that no file of `files` has, in name order: a newer version's
 * migrations (a rollback mid-deploy, an older pod still running). migrate and checkSchema report
 * them and never fail on them: the older code keeps starting on the newer schema (review 115).
 */
export function unrecognizedMigrations(
  recorded: Iterable<string>,
  files: readonly MigrationFile[],
): string[] {
  const known = new Set(files.map((file) => file.name));
  return [...recorded].filter((name) => !known.has(name)).sort();
}

/** @ferry/core's own folder: `prisma` beside `dist` (and beside `src` in the repository). */
const PACKAGE_PRISMA_DIR = path.resolve(__dirname, '../../prisma');

/**
 * ferry's own migrations, shipped in @ferry/core at `prisma/migrations` and found relative to
 * the package (from either src/schema or dist/schema). FERRY_MIGRATIONS_DIR overrides it.
 */
export function defaultMigrationsDir(): string {
  return process.env.FERRY_MIGRATIONS_DIR ?? path.join(PACKAGE_PRISMA_DIR, 'migrations');
}

/** The folder of ferry's Prisma model files shipped in @ferry/core (`prisma/schema`). */
export function prismaModelsDir(): string {
  return path.join(PACKAGE_PRISMA_DIR, 'schema');
}

/** Reads Prisma's folder format: one folder per migration holding `migration.sql`. */
export function loadMigrationFiles(dir: string = defaultMigrationsDir()): MigrationFile[] {
  if (!existsSync(dir)) {
    throw new FerryError('FERRY_MIGRATIONS_NOT_FOUND', `migrations folder not found: ${dir}`, {
      details: { dir },
    });
  }
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'migration.sql')))
      .map((entry) => entry.name)
      .sort()
      .map((name) => {
        const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
        return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
      });
  } catch (error) {
    // A folder or file the process may not read (EACCES) is no database failure, nor passing:
    // named, not retriable (review 46: inside a database call it read as PostgreSQL being down).
    const reason = error instanceof Error ? error.message : String(error);
    throw new FerryError('FERRY_MIGRATIONS_NOT_FOUND', `migrations folder ${dir} cannot be read: ${reason}`, {
      cause: error,
      details: { dir },
    });
  }
}
