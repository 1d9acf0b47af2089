/**
 * Each example is copied on its own into a user's project with examples/package.json's
 * dependencies: every package its sources (and its generated Prisma client) import must be
 * declared there, or the copy fails to build or start where the repository's root happens to
 * provide it (review 114: @prisma/adapter-pg, @prisma/client and reflect-metadata were undeclared).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const EXAMPLES = path.join(__dirname, '..');

function sourcesUnder(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sourcesUnder(full);
    return /\.(ts|js|mjs|cjs)$/.test(entry) && !entry.endsWith('.d.ts') ? [full] : [];
  });
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`, `name/sub` → `name`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function importedPackages(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  const pattern = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|import\s+)['"]([^'"]+)['"]/g;
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1]!;
    if (specifier.startsWith('.') || specifier.startsWith('/')) continue;
    if (specifier.startsWith('node:') || builtinModules.includes(packageOf(specifier))) continue;
    found.push(packageOf(specifier));
  }
  return found;
}

test("every package the examples' sources and generated clients import is declared in examples/package.json", () => {
  const manifest = JSON.parse(readFileSync(path.join(EXAMPLES, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const declared = new Set(Object.keys(manifest.dependencies ?? {}));
  const examples = readdirSync(EXAMPLES).filter((name) => statSync(path.join(EXAMPLES, name)).isDirectory());
  const files = examples.flatMap((name) => [
    ...sourcesUnder(path.join(EXAMPLES, name, 'src')),
    ...sourcesUnder(path.join(EXAMPLES, name, 'generated')),
  ]);
  expect(files.length).toBeGreaterThan(10);
  const undeclared = new Set<string>();
  for (const file of files) {
    for (const name of importedPackages(file)) {
      if (!declared.has(name)) undeclared.add(`${name} (${path.relative(EXAMPLES, file)})`);
    }
  }
  expect([...undeclared].sort()).toEqual([]);
});
