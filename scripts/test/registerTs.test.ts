// test-support/register-ts.js, the hook child `node` processes run TypeScript with: its disk
// cache of transpiled output serves only what the source it was made from would give.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REGISTER_TS } from '../../test-support/registerTs';

const folders: string[] = [];
const newFolder = () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'ferry-register-ts-'));
  folders.push(folder);
  return folder;
};
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

let cache: string;
let source: string;

beforeEach(() => {
  const folder = newFolder();
  cache = path.join(folder, 'cache');
  source = path.join(folder, 'answer.ts');
});

/** Runs `answer.ts` in a child through the hook: what it printed, and whether it loaded typescript. */
function run(): { printed: string; loadedTypescript: boolean } {
  const script = `
    require(${JSON.stringify(source)});
    const loaded = Object.keys(require.cache).some((k) => k.includes('/node_modules/typescript/'));
    process.stdout.write(JSON.stringify({ loadedTypescript: loaded }));`;
  const child = spawnSync(process.execPath, ['-r', REGISTER_TS, '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, FERRY_REGISTER_TS_CACHE: cache },
  });
  expect(child.stderr).toBe('');
  const [printed, report] = child.stdout.split('\n');
  return { printed: printed ?? '', ...(JSON.parse(report ?? '') as { loadedTypescript: boolean }) };
}

const writeSource = (answer: string) =>
  writeFileSync(source, `const answer: string = ${JSON.stringify(answer)};\nconsole.log(answer);\n`);
const entries = () => readdirSync(cache).map((name) => path.join(cache, name));

test('a source is transpiled once, then served from the cache without loading typescript', () => {
  writeSource('first');
  expect(run()).toEqual({ printed: 'first', loadedTypescript: true });
  expect(entries()).toHaveLength(1);
  expect(run()).toEqual({ printed: 'first', loadedTypescript: false });
});

test('a changed source is transpiled again, not served from the entry of its old text', () => {
  writeSource('first');
  run();
  writeSource('second');
  expect(run()).toEqual({ printed: 'second', loadedTypescript: true });
  expect(run()).toEqual({ printed: 'second', loadedTypescript: false });
});

describe('a spoiled entry', () => {
  // One source and the entry a child made of it, shared: each case spoils a copy of that entry in a
  // cache of its own (a child transpiling it, typescript loaded, for each case would cost ~0.6 s).
  let shared: { source: string; entry: string };
  beforeAll(() => {
    source = path.join(newFolder(), 'answer.ts');
    cache = path.join(path.dirname(source), 'cache');
    writeSource('first');
    run();
    const [entry] = entries();
    shared = { source, entry: entry! };
  });
  beforeEach(() => {
    source = shared.source;
    mkdirSync(cache);
    copyFileSync(shared.entry, path.join(cache, path.basename(shared.entry)));
  });

  test.each([
    ['cut short (a write interrupted)', (text: string) => text.slice(0, text.length - 20)],
    ['with another body', (text: string) => text.replace('"first"', '"stale"')],
    ['empty', () => ''],
    ['without its header', (text: string) => text.slice(text.indexOf('\n') + 1)],
  ])('%s is never used: the source is transpiled again', (_, spoil) => {
    const [entry] = entries();
    writeFileSync(entry!, spoil(readFileSync(entry!, 'utf8')));
    expect(run()).toEqual({ printed: 'first', loadedTypescript: true });
    // ... and the entry is made whole again.
    expect(run()).toEqual({ printed: 'first', loadedTypescript: false });
  });
});
