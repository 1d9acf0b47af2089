import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { packedFiles } from './packCache';
import { installedPackage, packageJson, PUBLISHED, ROOT } from './workspaces';

const rootLicense = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
const root = packageJson('.');

describe.each(PUBLISHED)('the %s package', (dir) => {
  const pkg = packageJson(dir);
  const files = packedFiles(dir);

  it('carries the metadata npm shows and needs', () => {
    expect(pkg.description?.length).toBeGreaterThan(20);
    expect(pkg.keywords?.length).toBeGreaterThan(0);
    expect(pkg.license).toBe('MIT');
    expect(pkg.repository).toEqual({ ...root.repository, directory: dir });
    expect(pkg.engines).toEqual(root.engines);
    expect(pkg.scripts?.prepack).toBe('node ../../scripts/prepack.js');
  });

  it('ships a README, the LICENSE and compiled code only: no sources, tests or source maps', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js']));
    expect(readFileSync(path.join(ROOT, dir, 'LICENSE'), 'utf8')).toBe(rootLicense);
    const stray = files.filter(
      (file) =>
        file.startsWith('src/') ||
        file.startsWith('test/') ||
        file.endsWith('.map') ||
        file.endsWith('.tsbuildinfo') ||
        /\.test\.(js|d\.ts)$/.test(file),
    );
    expect(stray).toEqual([]);
  });

  // Review finding (failed first): @ferry/testing linked docs/conformance.md, which it did not ship,
  // and the transports ../../packages/core/README.md, which is not in node_modules.
  it('links only files its tarball holds, from every Markdown file it ships (else the repository URL)', () => {
    const broken = files
      .filter((file) => file.endsWith('.md'))
      .flatMap((file) =>
        [
          ...readFileSync(path.join(ROOT, dir, file), 'utf8').matchAll(
            /\]\((?![a-z][a-z0-9+.-]*:)([^)#\s]+)/gi,
          ),
        ]
          .map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] as string)))
          .filter((target) => !files.includes(target) && !files.some((f) => f.startsWith(`${target}/`)))
          .map((target) => `${file} → ${target}`),
      );
    expect(broken).toEqual([]);
  });

  // Review finding (failed first): only @ferry/core exported it (ERR_PACKAGE_PATH_NOT_EXPORTED).
  it('exports ./package.json (version reporting and tooling read it)', () => {
    const { exports } = pkg as { exports?: Record<string, unknown> };
    expect(exports?.['./package.json']).toBe('./package.json');
  });

  it('depends only on packages CommonJS tools can require (jest on Node 20 cannot load ES modules)', () => {
    const esmOnly = Object.keys(pkg.dependencies ?? {}).filter((name) => {
      const { manifest } = installedPackage(dir, name);
      return manifest.type === 'module' && !JSON.stringify(manifest.exports ?? {}).includes('"require"');
    });
    expect(esmOnly).toEqual([]);
  });

  it('marks every peer dependency that only one entry point needs, or that is loaded lazily, as optional', () => {
    const peers = Object.keys(pkg.peerDependencies ?? {});
    const optional = peers.filter((name) => pkg.peerDependenciesMeta?.[name]?.optional === true);
    // @ferry/core loads @opentelemetry/api lazily and traces nothing without it; kysely only for
    // the `@ferry/core/kysely` entry point and an emit given a Kysely object; prom-client only for
    // the `@ferry/core/metrics` entry point.
    const expected: Record<string, string[]> = {
      'packages/testing': peers,
      'packages/core': ['@opentelemetry/api', 'kysely', 'prom-client'],
      // @ferry/kafka loads @platformatic/kafka only for connections with client 'platformatic'.
      'transports/kafka': ['@platformatic/kafka'],
    };
    expect(optional).toEqual(expected[dir] ?? []);
  });
});

describe('the @ferry/core tarball', () => {
  const files = packedFiles('packages/core');

  it('holds every migration and the Prisma models without the repository generator', () => {
    const dir = path.join(ROOT, 'packages/core/prisma/migrations');
    const migrations = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `prisma/migrations/${entry.name}/migration.sql`);
    expect(migrations.length).toBeGreaterThan(0);
    expect(files).toEqual(expect.arrayContaining(migrations));
    const models = readdirSync(path.join(ROOT, 'packages/core/prisma/schema'))
      .filter((name) => name.endsWith('.prisma') && name !== 'ferry.prisma')
      .map((name) => `prisma/schema/${name}`);
    expect(files.filter((f) => f.startsWith('prisma/schema/'))).toEqual(models.sort());
  });

  it('ships every entry point (., ./kysely, ./transport, ./metrics, ./internal/testing) with its types, also for moduleResolution node', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'packages/core/package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
      typesVersions: Record<string, Record<string, string[]>>;
    };
    const entries = Object.entries(pkg.exports).filter(([entry]) => entry !== './package.json');
    expect(entries.map(([entry]) => entry)).toEqual([
      '.',
      './kysely',
      './transport',
      './metrics',
      './internal/testing',
    ]);
    for (const [entry, target] of entries) {
      if (typeof target === 'string') throw new Error(`${entry} has no types condition`);
      expect(files).toEqual(expect.arrayContaining([target.types, target.default].map((f) => f.slice(2))));
      if (entry !== '.') expect(pkg.typesVersions['*']?.[entry.slice(2)]).toEqual([target.types.slice(2)]);
    }
  });

  it('resolves each entry point by its package path in Node (the exports map, not jest)', () => {
    for (const entry of [
      '@ferry/core',
      '@ferry/core/kysely',
      '@ferry/core/transport',
      '@ferry/core/metrics',
      '@ferry/core/internal/testing',
    ]) {
      const script = `process.stdout.write(require.resolve(${JSON.stringify(entry)}))`;
      const resolved = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
      expect(path.relative(path.join(ROOT, 'packages/core'), realpathSync(resolved))).toMatch(/^dist\//);
    }
  });
});
