import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './brokers';

const run = promisify(execFile);

/**
 * The files `node scripts/fault-suite.js harness <args> --listTests` selects, relative to the
 * repository (what `npm run test:harness -- <args>` would run); `initCwd` is npm's INIT_CWD, where
 * the command was typed.
 */
export async function listedFiles(args: string[], initCwd?: string): Promise<string[]> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.JEST_WORKER_ID;
  if (initCwd === undefined) delete env.INIT_CWD;
  else env.INIT_CWD = initCwd;
  const { stdout } = await run('node', ['scripts/fault-suite.js', 'harness', ...args, '--listTests'], {
    cwd: REPO_ROOT,
    env,
    timeout: 100_000,
  });
  return stdout
    .split('\n')
    .filter((line) => line.endsWith('.test.ts'))
    .map((file) => file.slice(REPO_ROOT.length + 1));
}
