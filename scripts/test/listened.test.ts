/**
 * The suite's raw node-postgres connections (test-support/oneStatement's `listened`) against a
 * backend PostgreSQL ends under them (pg_terminate_backend, as a crash test, `DROP DATABASE ...
 * WITH (FORCE)` or an idle-in-transaction timeout does). A bare Client's 'error' nobody listens
 * to ends the process (CI: "Unhandled error. Connection terminated unexpectedly" failed a test
 * file); a listened Client or Pool records it, and the file goes on.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { serverUrl } from '../../test-support/database';
import { connectionError, listened, oneStatement } from '../../test-support/oneStatement';

jest.setTimeout(60_000);

async function terminate(pid: number): Promise<void> {
  const [row] = await oneStatement<{ done: boolean }>(
    serverUrl(),
    'SELECT pg_terminate_backend($1) AS done',
    [pid],
  );
  expect(row?.done).toBe(true);
}

/** Until `connection` reported an error (a hang guard of 20 s, never a measurement). */
async function reported(connection: object): Promise<Error> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const error = connectionError(connection);
    if (error !== undefined) return error;
    if (Date.now() > deadline) throw new Error('the connection never reported its end');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A process holding a bare Client (no 'error' listener) whose backend is terminated. */
const BARE = `
const { Client } = require('pg');
(async () => {
  const client = new Client({ connectionString: process.argv[1] });
  await client.connect();
  const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
  process.stdout.write(String(rows[0].pid) + '\\n');
  setTimeout(() => { process.stdout.write('SURVIVED\\n'); process.exit(0); }, 20000);
})();
`;

test('a bare Client ends its process when its backend is terminated (what listened prevents)', async () => {
  const child = execFile(process.execPath, ['-e', BARE, serverUrl()], { cwd: __dirname, timeout: 40_000 });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!/^\d+\n/.test(stdout) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  await terminate(Number(stdout.trim()));
  expect(await exited).not.toBe(0);
  expect(stdout).not.toContain('SURVIVED');
  expect(stderr).toMatch(/terminat/i);
});

test('a listened Client records its backend being terminated, nothing unhandled', async () => {
  const client = listened(new Client({ connectionString: serverUrl() }));
  expect(client.listenerCount('error')).toBe(1);
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await terminate(rows[0]!.pid);
    expect((await reported(client)).message).toMatch(/terminat/i);
    await expect(client.query('SELECT 1')).rejects.toThrow();
  } finally {
    await client.end().catch(() => undefined);
  }
});

test('a listened Pool records its idle connection being terminated, nothing unhandled', async () => {
  const pool = listened(new Pool({ connectionString: serverUrl(), max: 1 }));
  expect(pool.listenerCount('error')).toBe(1);
  try {
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await terminate(rows[0]!.pid);
    expect((await reported(pool)).message).toMatch(/terminat/i);
    // The pool dropped the ended connection: the next statement gets a new one.
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  } finally {
    await pool.end();
  }
});

/**
 * Where the suites build a raw Client or Pool: each is given to `listened` or has an 'error'
 * listener of its own under the name it was assigned to. The few that are not, each with its
 * reason: code in a string a child process runs, a comment, a loop adding the listener.
 */
const NOT_LISTENED_ON_PURPOSE = new Map([
  ['packages/core/test/review38-malformedListenUrl.test.ts', 'a comment names one'],
  ['packages/core/test/review83-asyncParse.test.ts', 'the application a child process runs'],
  [
    'packages/core/test/outbox/sharedCallerSignal.test.ts',
    "a child process's script (its own Pool is listened)",
  ],
  ['packaging/esmTypes.test.ts', 'an application type-checked, never run'],
  ['packages/core/test/validation/endedPool.test.ts', 'its two Pools are listened in a loop'],
  [
    'packages/testing/test/readmeExample.test.ts',
    "the README's example, word for word (packages/testing/test/readme.test.ts): a user's code",
  ],
  ['scripts/test/listened.test.ts', 'the bare Client of the child process above'],
]);

test("every raw pg Client and Pool of the suites has an 'error' listener", () => {
  const root = path.resolve(__dirname, '../..');
  const tracked = execFileSync(
    'git',
    [
      'ls-files',
      'packages',
      'transports',
      'fault-tests',
      'bench',
      'scripts',
      'examples',
      'test-support',
      'packaging',
    ],
    { cwd: root, encoding: 'utf8' },
  )
    .split('\n')
    .filter(
      (file) =>
        /\.(ts|js|mjs|cjs)$/.test(file) &&
        !/(^|\/)(src|dist|node_modules)\//.test(file.replace(/^bench\/src\//, 'bench/')),
    );
  const bare: string[] = [];
  for (const file of tracked) {
    const text = readFileSync(path.join(root, file), 'utf8');
    if (!/new (pg\.)?(Client|Pool)\(/.test(text)) continue;
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      if (!/new (pg\.)?(Client|Pool)\(/.test(line)) return;
      if (line.includes('listened(') || /listened\($/.test(lines[index - 1] ?? '')) return;
      const name = /([\w$]+)\s*(?::[^=]+)?=\s*(?:await\s+)?new (?:pg\.)?(?:Client|Pool)\(/.exec(line)?.[1];
      const own = name !== undefined && new RegExp(`\\b${name}\\s*\\.\\s*(on|once)\\(\\s*'error'`).test(text);
      if (!own && !NOT_LISTENED_ON_PURPOSE.has(file)) bare.push(`${file}:${index + 1}`);
    });
  }
  expect(bare).toEqual([]);
});
