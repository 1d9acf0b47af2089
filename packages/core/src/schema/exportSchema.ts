import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FerryError } from '../errors';
import { knownKeysOption, nonEmptyOption, type OptionKeys } from '../optionChecks';
import { loadMigrationFiles, prismaModelsDir } from './migrationFiles';
import { createTableSql, FERRY_MIGRATIONS_TABLE } from './migrationsTable';

export interface ExportSqlOptions {
  /** Only migrations whose name sorts after this one (an upgrade from that migration). */
  after?: string;
}

const KEYS = { after: true } as const satisfies OptionKeys<ExportSqlOptions>;

/**
 * ferry's migrations as one plain SQL script for Prisma Migrate, Flyway, Liquibase and the like.
 * Each migration is followed by the row that records it in ferry_schema_migrations, so
 * `checkSchema()` / `ferry check` pass and `ferry migrate` finds nothing left to do. The script
 * opens no transaction of its own: the tool that applies it decides.
 */
export function exportSql(options: ExportSqlOptions = {}): string {
  options = knownKeysOption('', options, KEYS);
  const after = options.after === undefined ? undefined : nonEmptyOption('after', options.after);
  const all = loadMigrationFiles();
  if (after !== undefined && !all.some((file) => file.name === after)) {
    throw new FerryError('FERRY_MIGRATIONS_NOT_FOUND', `no ferry migration named ${after}`, {
      details: { after },
    });
  }
  const files = all.filter((file) => after === undefined || file.name > after);
  const parts = [
    `-- ferry's schema: ${files.map((f) => f.name).join(', ') || `nothing after ${String(after)}`}\n` +
      `-- Printed by \`ferry sql\`; each migration records itself in ${FERRY_MIGRATIONS_TABLE}.`,
    `${createTableSql(FERRY_MIGRATIONS_TABLE)};`,
  ];
  for (const file of files) {
    // Folder names and hex checksums only: checked here because they become literals.
    if (!/^[A-Za-z0-9_.-]+$/.test(file.name)) {
      throw new FerryError('FERRY_MIGRATIONS_NOT_FOUND', `unusable migration folder name ${file.name}`);
    }
    parts.push(
      `-- ${file.name}\n${file.sql.trim()}`,
      `INSERT INTO ${FERRY_MIGRATIONS_TABLE} (name, checksum) VALUES ('${file.name}', '${file.checksum}')\n` +
        '  ON CONFLICT (name) DO NOTHING;',
    );
  }
  return `${parts.join('\n\n')}\n`;
}

/**
 * ferry's Prisma models (outbox, inbox, migrations table) for applications that manage their
 * schema with Prisma: paste them into the application's schema. Generator and datasource
 * blocks are the application's own and are never part of it.
 */
export function exportPrismaModels(): string {
  const dir = prismaModelsDir();
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.prisma'))
    .sort()
    .map((name) => readFileSync(path.join(dir, name), 'utf8'))
    .filter((text) => !/^\s*(generator|datasource)\s+\w+\s*\{/m.test(text));
  return `${files.map((text) => text.trim()).join('\n\n')}\n`;
}
