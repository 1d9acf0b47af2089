/**
 * Review 91, failing test: `npm run test:<suite> -- <path>` (review 90) misses a path through a
 * symbolic link.
 *
 * What I did: reached the repository through a symbolic link (macOS's /tmp and /var, a home
 * directory on another disk, a worktree linked into a workspace) and gave the scenario's path as a
 * shell completes it there: absolute through the link, or relative to where I typed the command
 * when npm's INIT_CWD is that link.
 * What happened: fault-suite.js compared the path as given with the repository's real path
 * (`__dirname`), so the file was "not of the suite's folder": nothing selected, "No tests found".
 * What should happen: the file the path names is the one compared, whichever way it was reached.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './brokers';
import { listedFiles } from './faultSuite';

jest.setTimeout(120_000);

const dir = mkdtempSync(path.join(tmpdir(), 'ferry-review91-'));
const link = path.join(dir, 'repo');
symlinkSync(REPO_ROOT, link);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('an absolute path through a symbolic link to the repository selects its file', async () => {
  expect(await listedFiles([`${link}/fault-tests/harness/ports.test.ts`])).toEqual([
    'fault-tests/harness/ports.test.ts',
  ]);
});

it('a relative path typed where INIT_CWD is a symbolic link selects its file', async () => {
  expect(await listedFiles(['harness/ports.test.ts'], path.join(link, 'fault-tests'))).toEqual([
    'fault-tests/harness/ports.test.ts',
  ]);
});
