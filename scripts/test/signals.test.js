// Review 75: the scripts that run long work in a child (setup's steps, CI's `npm test`; the fault
// suites' jest is review75-own-setup.test.ts's case) must stop that work when they are stopped:
// a SIGTERM / SIGINT / SIGHUP is passed on to the child's process group, a second one ends
// everything at once. The child here is a stand-in put first on PATH (`npx`, `npm`): it records
// its pid and sleeps, optionally ignoring the signals.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
jest.setTimeout(60_000);

const scratch = [];
const pids = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A folder with a stand-in `name` command that writes its pid to `pidFile` and sleeps. */
function standIn(name, { ignoreSignals }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-signals-test-'));
  scratch.push(dir);
  const pidFile = path.join(dir, 'pid');
  fs.writeFileSync(
    path.join(dir, name),
    `#!/usr/bin/env bash\n${ignoreSignals ? "trap '' TERM INT HUP\n" : ''}echo $$ > ${pidFile}\nexec sleep 600\n`,
    { mode: 0o755 },
  );
  return { dir, pidFile };
}

const CASES = [
  { script: 'scripts/setup.js', argv: ['node', 'scripts/setup.js', '--generate'], command: 'npx' },
  { script: '.ci/run', argv: ['.ci/run'], command: 'npm' },
];

describe.each(CASES)('$script', ({ argv, command }) => {
  async function start(ignoreSignals) {
    const fake = standIn(command, { ignoreSignals });
    const servicesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-signals-services-'));
    scratch.push(servicesDir);
    const script = spawn(argv[0], argv.slice(1), {
      cwd: ROOT,
      // FERRY_SERVICES_DIR: .ci/run's `scripts/services down` finds nothing of its own to stop.
      env: { ...process.env, PATH: `${fake.dir}:${process.env.PATH}`, FERRY_SERVICES_DIR: servicesDir },
      stdio: 'ignore',
    });
    pids.push(script.pid);
    const exited = new Promise((resolve) => script.once('exit', (code, signal) => resolve({ code, signal })));
    const childPid = await until(
      () => fs.existsSync(fake.pidFile) && Number(fs.readFileSync(fake.pidFile, 'utf8')),
      20_000,
    );
    expect(childPid).toBeGreaterThan(0);
    pids.push(childPid);
    return { script, exited, childPid };
  }

  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'])('a %s ends its child and the script', async (signal) => {
    const { script, exited, childPid } = await start(false);
    script.kill(signal);
    const gone = await until(() => !alive(childPid), 10_000);
    const exit = await Promise.race([exited, until(() => false, 10_000)]);
    expect({ childRunning: !gone, scriptExited: exit !== undefined }).toEqual({
      childRunning: false,
      scriptExited: true,
    });
  });

  it('a second SIGTERM ends a child that ignores the first, at once', async () => {
    const { script, exited, childPid } = await start(true);
    script.kill('SIGTERM');
    await until(() => false, 500);
    expect(alive(childPid)).toBe(true);
    script.kill('SIGTERM');
    const exit = await Promise.race([exited, until(() => false, 5_000)]);
    const gone = await until(() => !alive(childPid), 5_000);
    expect({ exit, childRunning: !gone }).toEqual({ exit: { code: 143, signal: null }, childRunning: false });
  });
});
