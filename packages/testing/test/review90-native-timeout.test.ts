/**
 * Review 90, failing test: `startFerryServices`' native path at its `timeoutMs` neither says so nor
 * stops what the script started.
 *
 * What I did: `startFerryServices({ services: ['postgres'], mode: 'native', nativeScript, timeoutMs })`
 * with a services script that does not finish in time (a service that never becomes ready; here a
 * script that starts a helper process and waits).
 * What happened: execFile's timeout sent SIGTERM to the script only, and the rejection was
 * `FERRY_TRANSPORT_ERROR: <script> up failed: <whatever the script had printed>`, which says
 * nothing of the deadline; the script's own child processes outlived the call.
 * What should happen: `FERRY_TIMEOUT` naming the script and the `timeoutMs` it had, and the
 * script's whole process group ended.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFerryServices, waitUntil } from '@ferry/testing';
import { processAlive as alive } from '../../../fault-tests/harness/brokers';

describe('review90: startFerryServices native path at its timeoutMs', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ferry-review90-'));
  const pidFile = path.join(dir, 'helper.pid');
  const saved = process.env.FERRY_DATABASE_URL;
  afterAll(() => {
    // Whatever the outcome, the helper does not outlive the test.
    const helper = Number(readFileSync(pidFile, 'utf8'));
    if (alive(helper)) process.kill(helper, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (saved !== undefined) process.env.FERRY_DATABASE_URL = saved;
  });

  it('rejects FERRY_TIMEOUT naming timeoutMs and ends the processes the script started', async () => {
    const script = path.join(dir, 'services');
    writeFileSync(
      script,
      `#!/bin/sh\necho "postgres: starting" >&2\nsleep 300 &\necho $! > '${pidFile}'\nwait\n`,
    );
    chmodSync(script, 0o755);
    delete process.env.FERRY_DATABASE_URL; // the script's own endpoint: it is run
    const started = startFerryServices({
      services: ['postgres'],
      mode: 'native',
      nativeScript: script,
      timeoutMs: 1_000,
    });
    await expect(started).rejects.toMatchObject({
      code: 'FERRY_TIMEOUT',
      message: expect.stringContaining('within 1000 ms'),
    });
    const helper = Number(readFileSync(pidFile, 'utf8'));
    await waitUntil('the script helper ended', () => !alive(helper), { timeoutMs: 10_000 });
  }, 30_000);
});
