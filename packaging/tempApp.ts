import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedPack } from './packCache';
import { packageJson, PUBLISHED, ROOT } from './workspaces';

interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  optional?: boolean;
  [key: string]: unknown;
}

const WORKSPACE_FIELDS = [
  'name',
  'version',
  'license',
  'dependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
];

/** The tarballs of every published workspace, built first (tsc -b is incremental), packed once per content. */
export function packWorkspaces(): Map<string, string> {
  execFileSync('npx', ['tsc', '-b'], { cwd: ROOT, stdio: 'pipe' });
  return sharedPack().tarballs;
}

function integrity(file: string): string {
  return `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;
}

/**
 * Writes the application's package.json and a lockfile derived from the repository's, so that
 * `npm ci --offline` installs the tarballs and their dependencies from the npm cache alone:
 * every registry package at the version the repository locked (npm prunes what nothing needs).
 */
export function writeApplication(
  appDir: string,
  tarballs: Map<string, string>,
  install: { dependencies: string[]; devDependencies: string[] },
): void {
  const repoLock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const locked = repoLock.packages;
  const spec = (name: string): string => {
    const tarball = tarballs.get(name);
    if (tarball) return `file:${tarball}`;
    const version = locked[`node_modules/${name}`]?.version;
    if (!version) throw new Error(`the quick start installs ${name}, which the repository does not lock`);
    return version;
  };
  const deps = (names: string[]) => Object.fromEntries(names.map((name) => [name, spec(name)]));
  const manifest = {
    name: 'ferry-quickstart-app',
    version: '1.0.0',
    private: true,
    dependencies: deps(install.dependencies),
    devDependencies: deps(install.devDependencies),
  };
  const packages: Record<string, LockEntry> = { '': manifest };
  const workspaces = new Map(PUBLISHED.map((dir) => [dir, packageJson(dir).name]));
  for (const [key, entry] of Object.entries(locked)) {
    if (key === '') continue;
    if (key.startsWith('node_modules/')) {
      if (entry.link) continue;
      const { dev: _dev, devOptional: _devOptional, peer: _peer, optional, ...rest } = entry;
      packages[key] = optional && !entry.dev ? { ...rest, optional } : rest;
      continue;
    }
    const workspace = [...workspaces.keys()].find((dir) => key === dir || key.startsWith(`${dir}/`));
    if (!workspace) continue;
    const name = workspaces.get(workspace) as string;
    if (key !== workspace) {
      packages[`node_modules/${name}${key.slice(workspace.length)}`] = entry;
      continue;
    }
    const tarball = tarballs.get(name) as string;
    const published = packageJson(workspace) as unknown as Record<string, unknown>;
    const fields = Object.fromEntries(
      WORKSPACE_FIELDS.filter((f) => f in published).map((f) => [f, published[f]]),
    );
    packages[`node_modules/${name}`] = {
      ...fields,
      resolved: `file:${tarball}`,
      integrity: integrity(tarball),
    };
  }
  writeFileSync(path.join(appDir, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(
    path.join(appDir, 'package-lock.json'),
    JSON.stringify(
      { name: manifest.name, version: manifest.version, lockfileVersion: 3, requires: true, packages },
      null,
      2,
    ),
  );
}

/** Installs from the tarballs and the npm cache only; fails rather than reach a registry. */
export function installOffline(appDir: string): void {
  execFileSync(
    'npm',
    ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    {
      cwd: appDir,
      stdio: 'pipe',
    },
  );
}

/**
 * A folder of the describe block's own (removed in its `afterAll`) and the packed tarballs, packed
 * (or found packed) in its `beforeAll`. `tarballs()` is valid from the first test on.
 */
export function packedWorkDir(prefix: string): { readonly dir: string; tarballs(): Map<string, string> } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  let packed: Map<string, string> | null = null;
  beforeAll(() => {
    packed = packWorkspaces();
  }, 600_000);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir,
    tarballs: () => {
      if (!packed) throw new Error('the tarballs are packed in beforeAll');
      return packed;
    },
  };
}

/** `npm install` arguments of a test that installs beyond the repository's lock: the cache first, then the registry. */
export const NPM_INSTALL_PREFER_OFFLINE = [
  'install',
  '--prefer-offline',
  '--ignore-scripts',
  '--no-audit',
  '--no-fund',
  '--loglevel=error',
] as const;
