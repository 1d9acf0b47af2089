import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A fresh migrations folder in Prisma's format: `<name>/migration.sql` for each entry. */
export function migrationFolder(files: Record<string, string>, prefix = 'ferry-mig-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  for (const [name, sql] of Object.entries(files)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}
