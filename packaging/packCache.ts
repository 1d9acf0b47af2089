/**
 * The published workspaces packed once per content: every packaging test that needs the tarballs
 * or the list of what `npm pack` puts in them reads one shared pack, made by the first test file
 * that asks for it and kept in the system's temporary folder under the hash of everything the
 * pack reads. Four jest workers may pack at once (folderOnceSync: each into a folder of its own,
 * renamed into place; a worker that finds the place taken uses the pack already there).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { folderOnceSync } from '../test-support/folderOnce';
import { PUBLISHED, ROOT } from './workspaces';

const CACHE = path.join(tmpdir(), 'ferry-pack-cache');
const REPORT = 'pack.json';
/** Packs of other contents older than this are removed (a run lasts well under an hour). */
const STALE_MS = 24 * 60 * 60 * 1000;

export interface Pack {
  /** The folder holding the tarballs. */
  readonly dir: string;
  /** Package name → tarball path. */
  readonly tarballs: Map<string, string>;
  /** Workspace folder → the paths in its tarball, sorted. */
  readonly files: Map<string, string[]>;
}

interface PackReport {
  name: string;
  filename: string;
  files: { path: string }[];
}

/** Every file under `dir` but node_modules, in a stable order. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** The hash of all that `npm pack` of the published workspaces reads (and of the node packing them). */
function contentHash(): string {
  const hash = createHash('sha256').update(`${process.execPath} ${process.version}\n`);
  const inputs = [
    path.join(ROOT, 'package.json'),
    path.join(ROOT, 'LICENSE'),
    ...PUBLISHED.flatMap((dir) => filesUnder(path.join(ROOT, dir))),
  ];
  for (const file of inputs) {
    hash.update(`${path.relative(ROOT, file)}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 32);
}

function load(dir: string): Pack {
  const reports = JSON.parse(readFileSync(path.join(dir, REPORT), 'utf8')) as PackReport[];
  const byName = new Map(reports.map((report) => [report.name, report]));
  const files = new Map<string, string[]>();
  for (const workspace of PUBLISHED) {
    const { name } = JSON.parse(readFileSync(path.join(ROOT, workspace, 'package.json'), 'utf8')) as {
      name: string;
    };
    const report = byName.get(name);
    if (!report) throw new Error(`the pack in ${dir} has no tarball of ${name}`);
    files.set(workspace, report.files.map((file) => file.path).sort());
  }
  return {
    dir,
    tarballs: new Map(reports.map((report) => [report.name, path.join(dir, report.filename)])),
    files,
  };
}

function removeStale(keep: string): void {
  for (const name of readdirSync(CACHE)) {
    const entry = path.join(CACHE, name);
    if (entry === keep) continue;
    try {
      if (Date.now() - statSync(entry).mtimeMs > STALE_MS) rmSync(entry, { recursive: true, force: true });
    } catch {
      // Removed by another worker meanwhile.
    }
  }
}

/**
 * The tarballs of every published workspace as they are on disk now (scripts not run: building
 * is the caller's job), packed by this call or by an earlier one on the same content.
 */
export function sharedPack(): Pack {
  mkdirSync(CACHE, { recursive: true });
  const final = folderOnceSync(
    path.join(CACHE, contentHash()),
    (folder) => existsSync(path.join(folder, REPORT)),
    (folder) => {
      const args = ['pack', '--ignore-scripts', '--json', '--pack-destination', folder];
      for (const workspace of PUBLISHED) args.push('-w', workspace);
      const report = execFileSync('npm', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      writeFileSync(path.join(folder, REPORT), report);
      removeStale(folder);
    },
  );
  return load(final);
}

/** The pack packedFiles reads: hashed once per test file (a hash reads every file, ~0.5 s). */
let listed: Pack | undefined;

/** The paths `npm pack` puts in the tarball of workspace `dir`, sorted (scripts not run: the build is setup's job). */
export function packedFiles(dir: string): string[] {
  listed ??= sharedPack();
  const files = listed.files.get(dir);
  if (!files) throw new Error(`${dir} is not a published workspace`);
  return files;
}
