/**
 * Official Java clients for tests that publish what the Node.js clients cannot: a pom's runtime
 * jars fetched from Maven Central once, as scripts/services fetches Kafka's
 * (`mvn -B -q dependency:copy-dependencies`), then a .java file compiled once (`javac`, into
 * .services/java-classes/<hash of the source and the jars' folder and files>, packed as app.jar)
 * and run from there, with a class-data archive (AppCDS, app.jsa) the first run leaves behind.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

function jdkTool(name: 'java' | 'javac' | 'jar'): string {
  return process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', name) : name;
}

/**
 * What the jars of `jars` are: each one's name, size and modification time. A folder refetched
 * in place (scripts/services does so with a new Kafka client) no longer matches.
 */
function jarNames(jars: string): string[] {
  return readdirSync(jars)
    .filter((name) => name.endsWith('.jar'))
    .sort();
}

function jarsIdentity(jars: string): string {
  return jarNames(jars)
    .map((name) => {
      const { size, mtimeMs } = statSync(path.join(jars, name));
      return `${name}\t${size}\t${mtimeMs}`;
    })
    .join('\n');
}

/**
 * The folder holding `source` compiled against `jars/*` and packed into app.jar, compiled once per
 * content of both: the source launcher would compile it again in every run, seconds of CPU each.
 * A jar, not the classes folder, goes on the class path: AppCDS refuses a class path holding a
 * non-empty folder (-XX:ArchiveClassesAtExit then writes nothing).
 */
function compiled(jars: string, source: string): Promise<string> {
  const hash = createHash('sha256')
    .update('app.jar\n')
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
    async (tmp) => {
      const classes = path.join(tmp, 'classes');
      await run(jdkTool('javac'), ['-nowarn', '-cp', path.join(jars, '*'), '-d', classes, source], 120_000);
      await run(jdkTool('jar'), ['cf', path.join(tmp, APP_JAR), '-C', classes, '.'], 120_000);
    },
  );
}

const APP_JAR = 'app.jar';
const ARCHIVE = 'app.jsa';

/**
 * The JVM flags of every client run, FERRY_TEST_JAVA_FLAGS (split on white space) when set. A
 * client run lives ~1 s and sends a few records: the C2 compiler's threads (a third of its CPU)
 * never pay back, nor do G1's threads and the perf-data file. Measured on the 2-core CI VM, one
 * ForeignProducer run of 1 record (user+sys): 2.55 s by default, 1.75 s with these flags, 0.9 s
 * with these and the class-data archive as well; interpreting only (-Xint) 2.65 s.
 */
function clientFlags(): string[] {
  const flags = process.env.FERRY_TEST_JAVA_FLAGS;
  if (flags !== undefined) return flags.split(/\s+/).filter((flag) => flag !== '');
  return ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData'];
}

/**
 * Creates `lock` holding this process's pid; false when a live process holds it. A lock whose
 * process is gone (a run killed while dumping) is taken over: left in place, no later run on this
 * checkout would ever write the archive.
 */
function claimLock(lock: string): boolean {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      if (processAlive(lockHolder(lock))) return false;
      rmSync(lock, { force: true });
    }
  }
  return false;
}

/** The pid a lock file names, or null (unreadable, empty: a holder between create and write). */
function lockHolder(lock: string): number | null {
  try {
    const pid = Number(readFileSync(lock, 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether `pid` is a live process; an unknown holder (null) counts as alive. */
function processAlive(pid: number | null): boolean {
  if (pid === null) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * The class-data flags of a run from `classes`: the archive when an earlier run left one; else,
 * for the one run that claims it (a lock file, so concurrent workers do not all pay the dump, ~3 s
 * of CPU once), a dump at exit into a file of its own that `done` renames into place. A stale or
 * foreign archive is harmless: -Xshare:auto runs without it. FERRY_TEST_JAVA_CDS=0 turns it off.
 */
function classData(classes: string): { flags: string[]; done: (ok: boolean) => void } {
  const none = { flags: [], done: () => undefined };
  if (process.env.FERRY_TEST_JAVA_CDS === '0') return none;
  const archive = path.join(classes, ARCHIVE);
  if (existsSync(archive))
    return { flags: ['-Xshare:auto', `-XX:SharedArchiveFile=${archive}`], done: () => undefined };
  const lock = `${archive}.lock`;
  if (!claimLock(lock)) return none; // another live run is dumping it
  const dump = `${archive}.${process.pid}`;
  return {
    flags: [`-XX:ArchiveClassesAtExit=${dump}`],
    done: (ok) => {
      try {
        if (ok && existsSync(dump)) renameSync(dump, archive);
      } finally {
        rmSync(dump, { force: true });
        rmSync(lock, { force: true });
      }
    },
  };
}

/** Runs the Java source file `source` (its public class named as the file) with `jars/*` on its class path; resolves to its stdout. */
export async function runJavaSource(
  jars: string,
  source: string,
  args: readonly string[],
  options: { readonly timeoutMs?: number; readonly input?: string } = {},
): Promise<string> {
  const classes = await compiled(jars, source);
  // Each jar named, in a fixed order: an archive holds its class path, and a run may use it only
  // with the same one.
  const classPath = [
    path.join(classes, APP_JAR),
    ...jarNames(jars).map((name) => path.join(jars, name)),
  ].join(path.delimiter);
  const cds = classData(classes);
  // The JVM's own warnings (the archive's among them) on stderr: stdout is the client's answer.
  const logging = ['-Xlog:disable', '-Xlog:all=warning:stderr'];
  const java = [...clientFlags(), ...logging, ...cds.flags, '-cp', classPath];
  let ok = false;
  try {
    const out = await run(
      jdkTool('java'),
      [...java, path.basename(source, '.java'), ...args],
      options.timeoutMs ?? 120_000,
      options.input,
    );
    ok = true;
    return out;
  } finally {
    cds.done(ok);
  }
}
