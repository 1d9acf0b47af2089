/**
 * Official Java clients for tests that publish what the Node.js clients cannot: a pom's runtime
 * jars fetched from Maven Central once, as scripts/services fetches Kafka's
 * (`mvn -B -q dependency:copy-dependencies`), then a .java file compiled once (`javac`, into
 * .services/java-classes/<hash of the source and the jars' folder and files>) and run from there.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { folderOnce } from './folderOnce';

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

const builds = new Map<string, Promise<string>>();

/**
 * `dir`, built by `build` (into a folder it is given) unless it holds the marker `.complete` and
 * passes `done`: once per process and folder, and across processes by folderOnce.
 */
function builtOnce(
  dir: string,
  done: (folder: string) => boolean,
  build: (folder: string) => Promise<void>,
): Promise<string> {
  let built = builds.get(dir);
  if (built === undefined) {
    built = folderOnce(dir, done, build).catch((error: unknown) => {
      builds.delete(dir);
      throw error;
    });
    builds.set(dir, built);
  }
  return built;
}

/**
 * `dir`, holding the runtime jars of `pom` (and `jar` when named), fetched with Maven within
 * `timeoutMs` when it does not yet.
 */
export function mavenJars(pom: string, dir: string, jar?: string, timeoutMs = 300_000): Promise<string> {
  const has = (folder: string) => existsSync(path.join(folder, jar ?? '.'));
  return builtOnce(dir, has, async (tmp) => {
    const args = ['-B', '-q', '-Dstyle.color=never', '-f', pom, 'dependency:copy-dependencies'];
    await run('mvn', [...args, '-DincludeScope=runtime', `-DoutputDirectory=${tmp}`], timeoutMs);
    if (!has(tmp)) throw new Error(`Maven did not produce ${jar} from ${pom}`);
  });
}

function jdkTool(name: 'java' | 'javac'): string {
  return process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', name) : name;
}

/**
 * What the jars of `jars` are: each one's name, size and modification time. A folder refetched
 * in place (scripts/services does so with a new Kafka client) no longer matches.
 */
function jarsIdentity(jars: string): string {
  return readdirSync(jars)
    .filter((name) => name.endsWith('.jar'))
    .sort()
    .map((name) => {
      const { size, mtimeMs } = statSync(path.join(jars, name));
      return `${name}\t${size}\t${mtimeMs}`;
    })
    .join('\n');
}

/**
 * The folder holding `source` compiled against `jars/*`, compiled once per content of both: the
 * source launcher would compile it again in every run, seconds of CPU each.
 */
function compiled(jars: string, source: string): Promise<string> {
  const hash = createHash('sha256')
    .update(readFileSync(source))
    .update(jars)
    .update(jarsIdentity(jars))
    .digest('hex')
    .slice(0, 16);
  const name = `${path.basename(source, '.java')}-${hash}`;
  const dir = path.join(REPOSITORY_ROOT, '.services', 'java-classes', name);
  return builtOnce(
    dir,
    () => true,
    (tmp) =>
      run(jdkTool('javac'), ['-nowarn', '-cp', path.join(jars, '*'), '-d', tmp, source], 120_000).then(
        () => undefined,
      ),
  );
}

/** Runs the Java source file `source` (its public class named as the file) with `jars/*` on its class path; resolves to its stdout. */
export async function runJavaSource(
  jars: string,
  source: string,
  args: readonly string[],
  options: { readonly timeoutMs?: number; readonly input?: string } = {},
): Promise<string> {
  const classes = await compiled(jars, source);
  const classPath = [classes, path.join(jars, '*')].join(path.delimiter);
  return run(
    jdkTool('java'),
    ['-cp', classPath, path.basename(source, '.java'), ...args],
    options.timeoutMs ?? 120_000,
    options.input,
  );
}
