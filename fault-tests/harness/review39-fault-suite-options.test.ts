/**
 * Review 39: scripts/fault-suite.js (fff59ed) splits `npm run test:<suite> -- [scenario ...]
 * [jest options]` into scenario names and jest options. An argument not starting with `-` is a
 * scenario unless it follows one of the few options listed in TAKES_VALUE. Every other jest option
 * that takes a value has its value taken for a scenario name: jest is handed the option without
 * its value (yargs: "Not enough arguments following") and a scenario pattern that matches no file
 * ("No tests found"), so the documented `[jest options]` fail the run:
 *
 * - the kebab-case spellings jest (yargs) accepts for the listed options, e.g.
 *   `--test-timeout 600000` (a fault suite's usual need) or `--test-name-pattern name`;
 * - value options not listed: `--maxConcurrency 1`, `-c jest.config.js` / `--config`,
 *   `--testPathIgnorePatterns x`, `--openHandlesTimeout`, `--testFailureExitCode`, ...
 *
 * Each case lists the tests (`--listTests`, nothing is run) of one scenario with one such option
 * and expects what the run without the option lists: the scenario's file, exit 0.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './brokers';

jest.setTimeout(120_000);

const run = promisify(execFile);

async function listed(args: string[]): Promise<{ code: number; files: string[]; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.JEST_WORKER_ID;
  return run('node', ['scripts/fault-suite.js', 'harness', ...args], {
    cwd: REPO_ROOT,
    env,
    timeout: 100_000,
  }).then(
    ({ stdout, stderr }) => ({
      code: 0,
      files: stdout.split('\n').filter((line) => line.endsWith('.test.ts')),
      output: `${stdout}${stderr}`,
    }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === 'number' ? error.code : -1,
      files: (error.stdout ?? '').split('\n').filter((line) => line.endsWith('.test.ts')),
      output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }),
  );
}

const only = (result: { code: number; files: string[] }) => ({
  code: result.code,
  files: result.files.map((file) => file.slice(REPO_ROOT.length + 1)),
});

it('the scenario alone lists its file (the baseline)', async () => {
  expect(only(await listed(['ports', '--listTests']))).toEqual({
    code: 0,
    files: ['fault-tests/harness/ports.test.ts'],
  });
});

it.each([
  ['--test-timeout', '600000'],
  ['--test-name-pattern', 'ports'],
  ['--maxConcurrency', '1'],
  ['-c', 'jest.config.js'],
  ['--testPathIgnorePatterns', 'scaffold'],
])(
  'a jest option with its value (%s %s) is handed to jest, not taken for a scenario',
  async (option, value) => {
    // Fails: exit 1 and nothing listed (the value is taken for a scenario name).
    expect(only(await listed(['ports', '--listTests', option, value]))).toEqual({
      code: 0,
      files: ['fault-tests/harness/ports.test.ts'],
    });
  },
);
