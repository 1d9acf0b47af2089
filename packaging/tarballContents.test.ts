/**
 * `npm pack --dry-run` of every published package lists what it needs and nothing else: its
 * entry points, every module its compiled code and declarations load (the relative ones packed,
 * the others declared as dependencies that ship types), and no file without a source.
 */
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { packedFiles } from './packCache';
import { installedPackage, packageJson, PUBLISHED, ROOT } from './workspaces';

/** Files a package may ship besides its compiled code. */
const EXTRAS: Record<string, RegExp[]> = {
  'packages/core': [
    /^prisma\/migrations\/migration_lock\.toml$/,
    /^prisma\/migrations\/[^/]+\/migration\.sql$/,
    /^prisma\/schema\/[^/]+\.prisma$/,
    /^docs\/[^/]+\.md$/,
  ],
  'packages/testing': [/^docs\/[^/]+\.md$/],
};
const ALWAYS = ['package.json', 'README.md', 'LICENSE'];

/** The module specifiers a compiled file loads: require() in .js, import / import() in .d.ts. */
function specifiers(text: string, file: string): string[] {
  const pattern = file.endsWith('.d.ts')
    ? /(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g
    : /require\(\s*["']([^"']+)["']\s*\)/g;
  return [...text.matchAll(pattern)].map((m) => m[1] as string);
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] as string);
}

/** Every string leaf of an `exports` map. */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports];
  if (exports && typeof exports === 'object') return Object.values(exports).flatMap(exportTargets);
  return [];
}

describe.each(PUBLISHED)('npm pack of %s', (dir) => {
  const pkg = packageJson(dir) as ReturnType<typeof packageJson> & {
    main?: string;
    types?: string;
    exports?: unknown;
    bin?: Record<string, string>;
  };
  const files = packedFiles(dir);
  const packed = new Set(files);
  const compiled = files.filter((file) => file.startsWith('dist/'));
  const read = (file: string) => readFileSync(path.join(ROOT, dir, file), 'utf8');

  it('holds every entry point package.json names (main, types, exports, bin)', () => {
    const entries = [pkg.main, pkg.types, ...exportTargets(pkg.exports), ...Object.values(pkg.bin ?? {})]
      .filter((entry): entry is string => typeof entry === 'string')
      .map((entry) => path.posix.normalize(entry));
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.filter((entry) => !packed.has(entry))).toEqual([]);
  });

  it('holds nothing but its manifest, README, LICENSE, the compiled output of its sources and its listed extras', () => {
    const extras = EXTRAS[dir] ?? [];
    const unexpected = files.filter((file) => {
      if (ALWAYS.includes(file)) return false;
      if (extras.some((pattern) => pattern.test(file))) return false;
      const output = /^dist\/(.+)\.(js|d\.ts)$/.exec(file);
      // Compiled output whose source is gone (tsc -b never deletes it) is not shipped either.
      return !output || !existsSync(path.join(ROOT, dir, 'src', `${output[1] as string}.ts`));
    });
    expect(unexpected).toEqual([]);
  });

  it('holds every file its compiled code and declarations load relatively', () => {
    const missing = compiled.flatMap((file) =>
      specifiers(read(file), file)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => path.posix.join(path.posix.dirname(file), specifier))
        .filter((target) => {
          const candidates = file.endsWith('.d.ts')
            ? [`${target}.d.ts`, `${target}/index.d.ts`, target.replace(/\.js$/, '.d.ts')]
            : [`${target}.js`, `${target}/index.js`, target];
          return !candidates.some((candidate) => packed.has(candidate));
        })
        .map((target) => `${file} → ${target}`),
    );
    expect(missing).toEqual([]);
  });

  it('declares every package its compiled code loads, and one with types for every package its declarations name', () => {
    const declared = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
    ]);
    const bare = (suffix: string) =>
      new Set(
        compiled
          .filter((file) => file.endsWith(suffix) && (suffix === '.d.ts' || !file.endsWith('.d.ts')))
          .flatMap((file) => specifiers(read(file), file))
          .filter((specifier) => !specifier.startsWith('.') && !isBuiltin(specifier))
          .map(packageOf),
      );
    const undeclared = [...bare('.js'), ...bare('.d.ts')].filter((name) => !declared.has(name));
    expect([...new Set(undeclared)]).toEqual([]);
    const untyped = [...bare('.d.ts')].filter((name) => {
      const installed = installedPackage(dir, name);
      const { manifest } = installed;
      // TypeScript also finds declarations beside the JavaScript entry (kysely ships them so).
      const main = typeof manifest.main === 'string' ? manifest.main : 'index.js';
      const own =
        typeof manifest.types === 'string' ||
        typeof manifest.typings === 'string' ||
        JSON.stringify(manifest.exports ?? {}).includes('"types"') ||
        existsSync(path.join(installed.dir, 'index.d.ts')) ||
        existsSync(path.join(installed.dir, main.replace(/(\.js)?$/, '.d.ts')));
      return !own && !declared.has(`@types/${name.replace(/^@([^/]+)\//, '$1__')}`);
    });
    expect(untyped).toEqual([]);
  });
});
