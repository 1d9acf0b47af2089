/**
 * Review 75: a user runs the fault suites against their own setup, the way fault-tests/README.md
 * says, and stops or misconfigures them. Each case fails on the current code:
 *
 * 1. Stopping a run. `npm run test:<suite>` runs `scripts/fault-suite.js`, which starts jest with
 *    `spawnSync` and never forwards a signal. A SIGTERM or SIGINT that reaches the wrapper (npm
 *    forwards the one it gets; CI runners, `kill <pid>`, process managers send one to the command
 *    they started) ends the wrapper only: jest is re-parented to init and goes on breaking private
 *    brokers and databases for minutes, its output arriving after the command "ended", and a run
 *    started next competes with it. The README's own account of an interrupted run ("If jest
 *    itself is killed, afterAll does not run ...") assumes stopping the command stops jest.
 * 2. A per-file database the suite could not finish setting up stays on the user's server.
 *    `createTestDatabase()` (test-support/database.ts, every suite but `database`) runs `CREATE
 *    DATABASE ferry_t_*` on `FERRY_DATABASE_URL`'s server and then connects to the new database
 *    to migrate it; when that fails (here: the user's pg_hba.conf lets the role reach its own
 *    database only, a common hardening), it throws without dropping what it created, so every
 *    file of every run leaves one `ferry_t_*` database on the user's server.
 * 3. A private cluster that fails to come up is not cleaned up. README (database): "afterAll stops
 *    every cluster, removes its directory and unmounts the tmpfs, also when the test fails"; but
 *    `PrivateCluster.create()` creates `/tmp/ferry-pg-<name>-*` and only then runs `initdb` /
 *    `pg_ctl start`: when either fails (a wrong `FERRY_PG_BIN`, the override the README documents;
 *    a port another run took between freePort() and start; a start slower than pg_ctl's 60 s) the
 *    scenario never gets the cluster object, its afterAll has nothing to destroy, and the folder
 *    (an initdb'd cluster, ~40 MB, when start failed) is left in /tmp.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createTestDatabase } from '../../test-support/database';
import { PrivateCluster } from './privatePostgres';
import { processAlive, REPO_ROOT } from './brokers';
import { waitFor } from './waitFor';

jest.setTimeout(180_000);

function withEnv<T>(vars: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((key) => [key, process.env[key]]));
  Object.assign(process.env, vars);
  return work().finally(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
}

/** Lower-case letters only: fault-suite.js takes a suite folder name matching [a-z][a-z-]*. */
function letters(n: number): string {
  return [...randomBytes(n)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('');
}

describe('review75: stopping `npm run test:<suite>` stops the suite', () => {
  const suiteName = `reviewsignal-${letters(8)}`;
  const suiteDir = path.join(REPO_ROOT, 'fault-tests', suiteName);
  const pidFile = path.join(tmpdir(), `ferry-review75-${suiteName}.pid`);
  const started: ChildProcess[] = [];
  const jestPids: number[] = [];

  beforeAll(() => {
    // A scenario that stands for a long fault scenario: it records the pid of the process running
    // it and waits 60 s.
    mkdirSync(suiteDir);
    writeFileSync(
      path.join(suiteDir, 'long.test.ts'),
      `import { writeFileSync } from 'node:fs';
it('runs for a minute', async () => {
  writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
  await new Promise((resolve) => setTimeout(resolve, 60_000));
}, 120_000);
`,
    );
  });

  afterAll(() => {
    // Only the processes this file started, by their pid.
    for (const pid of jestPids) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    for (const child of started)
      if (child.pid !== undefined && processAlive(child.pid)) child.kill('SIGKILL');
    rmSync(suiteDir, { recursive: true, force: true });
    rmSync(pidFile, { force: true });
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'a %s to scripts/fault-suite.js ends the jest run it started',
    async (signal) => {
      rmSync(pidFile, { force: true });
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.JEST_WORKER_ID;
      const wrapper = spawn('node', ['scripts/fault-suite.js', suiteName], {
        cwd: REPO_ROOT,
        env,
        stdio: 'ignore',
      });
      started.push(wrapper);
      const exited = new Promise<void>((resolve) => wrapper.once('exit', () => resolve()));
      const jestPid = await waitFor(
        'the scenario to start',
        () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) || undefined : undefined),
        { timeoutMs: 90_000, intervalMs: 100 },
      );
      jestPids.push(jestPid);
      wrapper.kill(signal);
      await exited;
      // Give the run a moment to end.
      const gone = await waitFor('the jest run to end', () => !processAlive(jestPid), {
        timeoutMs: 15_000,
        intervalMs: 100,
      }).then(
        () => true,
        () => false,
      );
      // Fails: the wrapper is gone, jest (re-parented to init) still runs its scenario.
      expect({ signal, jestStillRunning: !gone }).toEqual({ signal, jestStillRunning: false });
    },
  );
});

describe('review75: what the suites create on the user PostgreSQL and in /tmp', () => {
  const PASSWORD = 'review75-S3cret';
  let cluster: PrivateCluster;

  beforeAll(async () => {
    cluster = await PrivateCluster.create('review75');
    // The user's server: an application role with a password and CREATEDB, its own database, and
    // a pg_hba.conf that lets the role into that database only.
    await cluster.query(`CREATE ROLE app LOGIN CREATEDB PASSWORD '${PASSWORD}'`);
    await cluster.query(`CREATE DATABASE appdb OWNER app`);
    const hba = path.join(cluster.dataDir, 'pg_hba.conf');
    writeFileSync(
      hba,
      `host appdb app 127.0.0.1/32 scram-sha-256\nhost all app 127.0.0.1/32 reject\n${readFileSync(hba, 'utf8')}`,
    );
    await cluster.query('SELECT pg_reload_conf()');
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  async function leftDatabases(): Promise<string[]> {
    const rows = await cluster.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'ferry_t_%' ORDER BY datname`,
    );
    return rows.map((row) => row.datname);
  }

  it('createTestDatabase() that cannot migrate its new database drops it before it throws', async () => {
    const url = `postgresql://app:${PASSWORD}@127.0.0.1:${cluster.port}/appdb`;
    const outcome = await withEnv({ FERRY_DATABASE_URL: url }, () =>
      createTestDatabase().then(
        async (database) => {
          await database.drop();
          return 'created';
        },
        (error: unknown) => `failed: ${String(error).slice(0, 200)}`,
      ),
    );
    // The set-up fails (the role may not connect to the new database)...
    expect(outcome).toMatch(/^failed: /);
    // ...and must not leave the database it created on the user's server. Fails: one ferry_t_*.
    expect(await leftDatabases()).toEqual([]);
  });

  function clusterDirs(name: string): string[] {
    return readdirSync(tmpdir()).filter((entry) => entry.startsWith(`ferry-pg-${name}-`));
  }

  afterEach(() => {
    for (const name of ['review75bin', 'review75start']) {
      for (const dir of clusterDirs(name)) rmSync(path.join(tmpdir(), dir), { recursive: true, force: true });
    }
  });

  it('a private cluster whose initdb fails (FERRY_PG_BIN wrong) leaves no folder in /tmp', async () => {
    let failure: unknown;
    await withEnv({ FERRY_PG_BIN: '/nonexistent/postgresql/bin' }, async () => {
      // The module reads FERRY_PG_BIN when it is loaded, as a suite does at its start.
      let isolated: typeof import('./privatePostgres') | undefined;
      jest.isolateModules(() => {
        isolated = jest.requireActual<typeof import('./privatePostgres')>('./privatePostgres');
      });
      failure = await isolated!.PrivateCluster.create('review75bin').then(
        async (created) => {
          await created.destroy();
          return undefined;
        },
        (error: unknown) => error,
      );
    });
    expect(String(failure)).toMatch(/initdb/);
    // Fails: /tmp/ferry-pg-review75bin-* is left behind.
    expect(clusterDirs('review75bin')).toEqual([]);
  });

  it('a private cluster whose server does not start leaves no initdb folder in /tmp', async () => {
    // Stands for any start that fails after initdb (a port another run took, a slow start): here
    // a setting the server refuses.
    const failure = await PrivateCluster.create('review75start', {
      settings: { shared_buffers: "'review75'" },
    }).then(
      async (created) => {
        await created.destroy();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(String(failure)).toMatch(/pg_ctl/);
    // Fails: /tmp/ferry-pg-review75start-* (an initdb'd data directory) is left behind.
    expect(clusterDirs('review75start')).toEqual([]);
  });
});
