/**
 * Review finding (failed first): for a database that does not exist or a role that does not, the
 * CLI printed ferry.db's raw pino JSON line ("unclassified database error") on stderr before its
 * own `ferry <cmd>: CODE: message`. The real binary (dist/main.js), FERRY_LOG_LEVEL unset: every
 * stderr line is the CLI's own.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { scratchDatabaseUrl } from '../../../test-support/database';

const MAIN = path.join(__dirname, '..', 'dist', 'main.js');

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const { FERRY_LOG_LEVEL: _level, ...env } = process.env;
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

const missingDatabase = scratchDatabaseUrl('ferry_no_such_db');
const missingRole = Object.assign(new URL(scratchDatabaseUrl('ferry_any')), {
  username: 'ferry_no_such_role',
}).href;

it.each([
  ['a database that does not exist', missingDatabase],
  ['a role that does not exist', missingRole],
])('prints only its own lines on stderr for %s', async (_case, url) => {
  const { code, stderr } = await run(['outbox', 'stats', '--database-url', url]);
  expect(code).toBe(1);
  const lines = stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^ferry outbox stats: FERRY_[A-Z_]+: /);
  expect(lines.filter((line) => !/^(ferry outbox stats: |hint: )/.test(line))).toEqual([]);
});
