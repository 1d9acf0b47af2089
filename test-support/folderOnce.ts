/**
 * A folder built once and shared by processes (jest workers, later runs): each builder builds a
 * temporary folder of its own beside `dir` and renames it into place (atomic); a rename that finds
 * `dir` already placed (it passes `done`) keeps that one. A placed folder holds the marker
 * `.complete` and is never removed here (a broker may run from it).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

type Done = (folder: string) => boolean;

function placed(dir: string, done: Done): boolean {
  return existsSync(path.join(dir, '.complete')) && done(dir);
}

function temporaryFolder(dir: string): string {
  const tmp = `${dir}.tmp.${process.pid}.${randomBytes(4).toString('hex')}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  return tmp;
}

function place(tmp: string, dir: string, done: Done): void {
  writeFileSync(path.join(tmp, '.complete'), '');
  try {
    renameSync(tmp, dir);
  } catch (error) {
    if (!done(dir)) throw error;
  }
}

/** `dir`, built by `build` (into a folder it is given) unless it is placed and passes `done`. */
export async function folderOnce(
  dir: string,
  done: Done,
  build: (folder: string) => Promise<void>,
): Promise<string> {
  if (placed(dir, done)) return dir;
  const tmp = temporaryFolder(dir);
  try {
    await build(tmp);
    place(tmp, dir, done);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** folderOnce, with a synchronous `build` (for callers that cannot wait: a describe block). */
export function folderOnceSync(dir: string, done: Done, build: (folder: string) => void): string {
  if (placed(dir, done)) return dir;
  const tmp = temporaryFolder(dir);
  try {
    build(tmp);
    place(tmp, dir, done);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
