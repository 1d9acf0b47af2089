/**
 * `ferry outbox list | head -2`: the reader closes the pipe after the lines it wanted, and ferry
 * ends quietly (exit 0, nothing on stderr), as Unix tools do, instead of dying on EPIPE with a stack
 * trace. The real binary (dist/main.js) against a real database.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { emitMany } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

const MAIN = path.join(__dirname, '..', 'dist', 'main.js');

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  const events = Array.from({ length: 1_000 }, (_, i) => ({
    type: 'order.placed',
    payload: { n: i, note: 'x'.repeat(100) },
    tenantId: 'tenant-a',
  }));
  await emitMany(t.db, events);
});
afterAll(async () => {
  await t.drop();
});

it('ends quietly with exit 0 when its reader closes the pipe early', async () => {
  const child = spawn(
    process.execPath,
    [MAIN, 'outbox', 'list', '--limit', '1000', '--database-url', t.url],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FERRY_ACTOR: 'ops@test' },
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // As `head -2`: read the first chunk, then close the pipe.
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (exitCode) => {
      clearTimeout(kill);
      resolve(exitCode);
    });
  });
  expect(stderr).not.toMatch(/EPIPE|Error/);
  expect(code).toBe(0);
});
