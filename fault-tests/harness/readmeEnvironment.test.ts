/**
 * Review finding (failed first): the README's "On your own machine" named only FERRY_DATABASE_URL,
 * while suites read FERRY_AMQP_URL, FERRY_KAFKA_BROKERS and FERRY_SQS_ENDPOINT. Every variable the
 * suites (and the test-support files they load) read is named in fault-tests/README.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SUITES = path.resolve(__dirname, '..');
const SUPPORT = path.resolve(SUITES, '../test-support');
/** jest's own, not a setting of the suites. */
const JEST = new Set(['JEST_WORKER_ID']);

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|js)$/.test(file) && !file.includes('node_modules'))
    .map((file) => path.join(dir, file));
}

function variablesRead(files: string[]): string[] {
  const names = files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/process\.env(?:\.([A-Z_]+)|\[['"]([A-Z_]+)['"]\])/g)].map(
      (m) => (m[1] ?? m[2]) as string,
    ),
  );
  return [...new Set(names)].filter((name) => !JEST.has(name)).sort();
}

it('names in its README every environment variable the fault suites read', () => {
  const support = sources(SUITES)
    .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/test-support\/(\w+)/g)])
    .map((m) => m[1] as string);
  const loaded = [...new Set(['env', ...support])].flatMap((name) =>
    ['.ts', '.js'].map((ext) => path.join(SUPPORT, `${name}${ext}`)).filter(existsSync),
  );
  const read = variablesRead([...sources(SUITES), ...loaded]);
  expect(read).toEqual(expect.arrayContaining(['FERRY_AMQP_URL', 'FERRY_DATABASE_URL']));
  const readme = readFileSync(path.join(SUITES, 'README.md'), 'utf8');
  expect(read.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
});
