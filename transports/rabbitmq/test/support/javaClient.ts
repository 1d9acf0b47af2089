/**
 * The official RabbitMQ Java client (com.rabbitmq:amqp-client) for tests that publish what
 * amqplib cannot: fetched from Maven Central once, as scripts/services fetches Kafka's jars
 * (test/java/pom.xml, `mvn dependency:copy-dependencies`), into .services/java-clients/ (git-ignored),
 * then test/java/*.java files are run with the source launcher (`java -cp "<jars>/*" X.java`).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const JAVA_DIR = path.join(__dirname, '..', 'java');
const POM = path.join(JAVA_DIR, 'pom.xml');
const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const FETCH_TIMEOUT_MS = 300_000;

/** The amqp-client version the pom names. */
function clientVersion(): string {
  const version = /<amqp-client\.version>([^<]+)<\/amqp-client\.version>/.exec(
    readFileSync(POM, 'utf8'),
  )?.[1];
  if (version === undefined) throw new Error(`${POM} names no amqp-client.version`);
  return version;
}

/** Runs a command to its end within `timeoutMs`; rejects with its output when it fails. */
function run(command: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      const why = error.killed ? `killed after ${timeoutMs} ms` : error.message;
      reject(new Error(`${command} ${args.join(' ')}: ${why}\n${stdout}\n${stderr}`));
    });
  });
}

let fetched: Promise<string> | null = null;

/**
 * The folder holding the client's jars, fetched with Maven (-B -q) on the first call (once per
 * process). Two jest workers may fetch at once: each writes its own temporary folder and renames
 * it into place; the second rename finds the folder there and keeps it.
 */
export function javaClientJars(): Promise<string> {
  fetched ??= fetchJars().catch((error: unknown) => {
    fetched = null;
    throw error;
  });
  return fetched;
}

async function fetchJars(): Promise<string> {
  const version = clientVersion();
  const jars = path.join(ROOT, '.services', 'java-clients', `amqp-client-${version}`);
  const jar = `amqp-client-${version}.jar`;
  if (existsSync(path.join(jars, '.complete')) && existsSync(path.join(jars, jar))) return jars;
  const tmp = `${jars}.tmp.${process.pid}.${randomBytes(4).toString('hex')}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    await run(
      'mvn',
      [
        '-B',
        '-q',
        '-Dstyle.color=never',
        '-f',
        POM,
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${tmp}`,
      ],
      FETCH_TIMEOUT_MS,
    );
    if (!existsSync(path.join(tmp, jar))) throw new Error(`Maven did not produce ${jar} in ${tmp}`);
    writeFileSync(path.join(tmp, '.complete'), '');
    try {
      renameSync(tmp, jars);
    } catch (error) {
      if (!existsSync(path.join(jars, '.complete'))) throw error;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return jars;
}

/** Runs test/java/<file> with the Java client on its class path; resolves to its stdout. */
export async function runJava(file: string, args: readonly string[], timeoutMs = 120_000): Promise<string> {
  const jars = await javaClientJars();
  const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  return run(java, ['-cp', path.join(jars, '*'), path.join(JAVA_DIR, file), ...args], timeoutMs);
}
