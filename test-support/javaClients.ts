/**
 * Official Java clients for tests that publish what the Node.js clients cannot: a pom's runtime
 * jars fetched from Maven Central once, as scripts/services fetches Kafka's
 * (`mvn -B -q dependency:copy-dependencies`), then a .java file run with the source launcher
 * (`java -cp "<jars>/*" X.java`).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The repository's root: .services/ (git-ignored) lives there. */
export const REPOSITORY_ROOT = path.resolve(__dirname, '..');

/** Runs a command to its end within `timeoutMs`, `input` on its stdin; rejects with its output when it fails. */
function run(command: string, args: readonly string[], timeoutMs: number, input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout);
        const why = error.killed ? `killed after ${timeoutMs} ms` : error.message;
        reject(new Error(`${command} ${args.join(' ')}: ${why}\n${stdout}\n${stderr}`));
      },
    );
    child.stdin?.end(input ?? '');
  });
}

const fetches = new Map<string, Promise<string>>();

/**
 * `dir`, holding the runtime jars of `pom` (its marker `.complete`, and `jar` when named),
 * fetched with Maven within `timeoutMs` when they are not: once per process and folder. Two processes (jest
 * workers) may fetch at once: each writes its own temporary folder and renames it into place;
 * the second rename finds the folder there and keeps it.
 */
export function mavenJars(pom: string, dir: string, jar?: string, timeoutMs = 300_000): Promise<string> {
  let fetch = fetches.get(dir);
  if (fetch === undefined) {
    fetch = fetchJars(pom, dir, jar, timeoutMs).catch((error: unknown) => {
      fetches.delete(dir);
      throw error;
    });
    fetches.set(dir, fetch);
  }
  return fetch;
}

async function fetchJars(
  pom: string,
  dir: string,
  jar: string | undefined,
  timeoutMs: number,
): Promise<string> {
  const has = (folder: string) => existsSync(path.join(folder, jar ?? '.'));
  if (existsSync(path.join(dir, '.complete')) && has(dir)) return dir;
  const tmp = `${dir}.tmp.${process.pid}.${randomBytes(4).toString('hex')}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    const args = ['-B', '-q', '-Dstyle.color=never', '-f', pom, 'dependency:copy-dependencies'];
    await run('mvn', [...args, '-DincludeScope=runtime', `-DoutputDirectory=${tmp}`], timeoutMs);
    if (!has(tmp)) throw new Error(`Maven did not produce ${jar} from ${pom}`);
    writeFileSync(path.join(tmp, '.complete'), '');
    try {
      renameSync(tmp, dir);
    } catch (error) {
      // Another process renamed its folder into place first (never removed: a broker may run from it).
      if (!has(dir)) throw error;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Runs the Java source file `source` with `jars/*` on its class path; resolves to its stdout. */
export function runJavaSource(
  jars: string,
  source: string,
  args: readonly string[],
  options: { readonly timeoutMs?: number; readonly input?: string } = {},
): Promise<string> {
  const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  return run(
    java,
    ['-cp', path.join(jars, '*'), source, ...args],
    options.timeoutMs ?? 120_000,
    options.input,
  );
}
