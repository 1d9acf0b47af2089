/**
 * test-support/javaClients.ts compiles a Java source once and keeps its classes. The jars it was
 * compiled against can change under the same folder (scripts/services fetches a new Kafka client
 * into .services/kafka/libs in place): classes compiled against the old jars must not be run
 * against the new ones.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPOSITORY_ROOT, runJavaSource } from '../../../test-support/javaClients';

const javac = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'javac') : 'javac';
const jarTool = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'jar') : 'jar';

/** `jars/<name>`, a jar holding class `Lib` whose `version()` is `body` (its return type included). */
function libraryJar(work: string, jars: string, name: string, body: string): void {
  const src = path.join(work, name);
  mkdirSync(src, { recursive: true });
  writeFileSync(path.join(src, 'Lib.java'), `public class Lib { public static ${body} }\n`);
  execFileSync(javac, ['-d', src, path.join(src, 'Lib.java')], { timeout: 60_000 });
  execFileSync(jarTool, ['cf', path.join(jars, name), '-C', src, 'Lib.class'], { timeout: 60_000 });
}

let work: string;
/** `lib-1.jar` (version() returns the int 1), built once for both tests (javac and jar: two JVMs). */
let libOne: string;
beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'ferry-java-cache-'));
  const shared = path.join(work, 'shared-libs');
  mkdirSync(shared);
  libraryJar(work, shared, 'lib-1.jar', 'int version() { return 1; }');
  libOne = path.join(shared, 'lib-1.jar');
}, 120_000);
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  const classes = path.join(REPOSITORY_ROOT, '.services', 'java-classes');
  for (const entry of readdirSync(classes)) {
    if (entry.startsWith('CacheProbe-') || entry.startsWith('StaleLockProbe-'))
      rmSync(path.join(classes, entry), { recursive: true, force: true });
  }
});

test('a source is compiled again when the jars in its folder changed', async () => {
  const jars = path.join(work, 'libs');
  mkdirSync(jars);
  const source = path.join(work, 'CacheProbe.java');
  // println compiles against either Lib; the bytecode names version()'s return type.
  writeFileSync(
    source,
    'public class CacheProbe { public static void main(String[] a) { System.out.println(Lib.version()); } }\n',
  );
  copyFileSync(libOne, path.join(jars, 'lib-1.jar'));
  expect((await runJavaSource(jars, source, [])).trim()).toBe('1');
  // The first run left the class-data archive later runs start from (AppCDS writes none when the
  // class path holds a folder of classes).
  const classes = path.join(REPOSITORY_ROOT, '.services', 'java-classes');
  expect(
    readdirSync(classes).filter(
      (entry) => entry.startsWith('CacheProbe-') && existsSync(path.join(classes, entry, 'app.jsa')),
    ),
  ).toHaveLength(1);

  // The folder refetched in place with a newer library, as scripts/services does.
  rmSync(path.join(jars, 'lib-1.jar'));
  libraryJar(work, jars, 'lib-2.jar', 'String version() { return "two"; }');
  expect((await runJavaSource(jars, source, [])).trim()).toBe('two');
}, 240_000);

test('a class-data lock left by a run that was killed is taken over, and the archive written', async () => {
  const jars = path.join(work, 'stale-libs');
  mkdirSync(jars);
  copyFileSync(libOne, path.join(jars, 'lib.jar'));
  const source = path.join(work, 'StaleLockProbe.java');
  writeFileSync(
    source,
    'public class StaleLockProbe { public static void main(String[] a) { System.out.println(Lib.version()); } }\n',
  );
  // Compiled, without an archive (as if the dumping run had been killed before writing it).
  process.env.FERRY_TEST_JAVA_CDS = '0';
  try {
    expect((await runJavaSource(jars, source, [])).trim()).toBe('1');
  } finally {
    delete process.env.FERRY_TEST_JAVA_CDS;
  }
  const classes = path.join(REPOSITORY_ROOT, '.services', 'java-classes');
  const [folder] = readdirSync(classes).filter((entry) => entry.startsWith('StaleLockProbe-'));
  const dir = path.join(classes, folder!);
  expect(existsSync(path.join(dir, 'app.jsa'))).toBe(false);
  // The lock of a process that is gone: `true` has exited by the time spawnSync returns.
  const gone = spawnSync('true').pid;
  writeFileSync(path.join(dir, 'app.jsa.lock'), String(gone));

  expect((await runJavaSource(jars, source, [])).trim()).toBe('1');
  expect(existsSync(path.join(dir, 'app.jsa'))).toBe(true);
  expect(existsSync(path.join(dir, 'app.jsa.lock'))).toBe(false);
}, 240_000);
