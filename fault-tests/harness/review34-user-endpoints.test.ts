/**
 * Review 34: the fault suites run "against your own setup" (fault-tests/README.md, "On your own
 * machine": a PostgreSQL it may create databases on, `FERRY_DATABASE_URL`; `FERRY_AMQP_URL` for
 * the shared RabbitMQ). Each test below passes a user's endpoint the way the README says and
 * checks what a user relies on. All of them fail on the current code:
 *
 * 1. A role that may create databases on the database named in its URL, but may not connect to
 *    the `postgres` database (a hardened or managed server: `REVOKE CONNECT ON DATABASE postgres
 *    FROM PUBLIC`, or no `postgres` database at all): the per-file database is created through
 *    the URL's database, but `drop()` connects to `/postgres` instead (packages/testing's
 *    dropDatabase), fails, and every suite file leaves its `ferry_t_*` database behind on the
 *    user's server.
 * 2. A `FERRY_DATABASE_URL` whose endpoint accepts TCP but never answers (a stalled server, a
 *    wrong port behind a load balancer): `createTestDatabase()` opens a pg Client without a
 *    connect deadline and waits for ever; every suite then dies on jest's "Exceeded timeout of
 *    180000 ms for a hook", which names neither PostgreSQL nor the endpoint.
 * 3. A bad `FERRY_AMQP_URL` (refused, wrong password): hostile-input/rabbitmq's beforeAll has
 *    already created its database when `amqp.connect` fails; its afterAll then throws on
 *    `admin.close()` (admin undefined) before `database.drop()`, so the database is left on the
 *    user's server.
 * 4. Choosing a scenario by name through the documented npm script (`npm run
 *    test:broker-recovery -- <scenario>`): jest ORs the extra pattern with the script's own
 *    `--testPathPatterns fault-tests/broker-recovery`, so an unknown (mistyped) scenario name
 *    selects every broker-recovery file (minutes of private broker kills) instead of failing with
 *    "No tests found".
 */
import { execFile } from 'node:child_process';
import { writeFileSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase } from '../../test-support/database';
import { closedPort } from '../../test-support/closedPort';
import { PrivateCluster } from './privatePostgres';
import { REPO_ROOT } from './brokers';

jest.setTimeout(180_000);

const run = promisify(execFile);
const PASSWORD = 'review34-S3cret';

/** What a settled promise gave, or 'pending' when it had not settled within `ms`. */
async function within<T>(
  ms: number,
  work: Promise<T>,
): Promise<
  { status: 'fulfilled'; value: T } | { status: 'rejected'; error: unknown } | { status: 'pending' }
> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    work.then(
      (value) => ({ status: 'fulfilled' as const, value }),
      (error: unknown) => ({ status: 'rejected' as const, error }),
    ),
    new Promise<{ status: 'pending' }>((resolve) => {
      timer = setTimeout(() => resolve({ status: 'pending' }), ms);
    }),
  ]);
  clearTimeout(timer);
  return outcome;
}

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

async function leftDatabases(cluster: PrivateCluster): Promise<string[]> {
  const rows = await cluster.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'ferry_t_%' ORDER BY datname`,
  );
  return rows.map((row) => row.datname);
}

async function dropLeftovers(cluster: PrivateCluster): Promise<void> {
  for (const name of await leftDatabases(cluster)) {
    await cluster.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  }
}

describe('review34: the fault suites on a user-given PostgreSQL / RabbitMQ', () => {
  let cluster: PrivateCluster;

  beforeAll(async () => {
    cluster = await PrivateCluster.create('review34');
    // The user's setup: an application role with a password and CREATEDB, its own database, and
    // no right to connect to `postgres` (the default database the role is not meant to use).
    await cluster.query(`CREATE ROLE app LOGIN CREATEDB PASSWORD '${PASSWORD}'`);
    await cluster.query(`CREATE DATABASE appdb OWNER app`);
    await cluster.query(`REVOKE CONNECT ON DATABASE postgres FROM PUBLIC`);
    const hba = path.join(cluster.dataDir, 'pg_hba.conf');
    writeFileSync(hba, `host all app 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
    await cluster.query('SELECT pg_reload_conf()');
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  afterEach(async () => {
    await dropLeftovers(cluster);
  });

  it('drop() removes the per-file database of a role that may not connect to the postgres database', async () => {
    const url = `postgresql://app:${PASSWORD}@127.0.0.1:${cluster.port}/appdb`;
    const dropError = await withEnv({ FERRY_DATABASE_URL: url }, async () => {
      const database = await createTestDatabase();
      try {
        await database.drop();
        return null;
      } catch (error) {
        return error;
      }
    });
    const left = await leftDatabases(cluster);
    // Nothing of the suite stays on the user's server, and drop() did not fail.
    expect({ dropError: dropError === null ? null : String(dropError), left }).toEqual({
      dropError: null,
      left: [],
    });
  });

  it('createTestDatabase() fails with an error (not a hang) when the server never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const outcome = await withEnv(
        { FERRY_DATABASE_URL: `postgresql://app:${PASSWORD}@127.0.0.1:${port}/appdb` },
        () => within(45_000, createTestDatabase()),
      );
      // A bounded wait, ending in an error a user can act on (well inside the suites' 180 s hooks).
      expect(outcome.status).toBe('rejected');
      if (outcome.status === 'rejected') {
        expect(String(outcome.error)).not.toContain(PASSWORD);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('hostile-input/rabbitmq leaves no database behind when FERRY_AMQP_URL is refused', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      FERRY_DATABASE_URL: cluster.url('postgres'),
      FERRY_AMQP_URL: `amqp://guest:guest@127.0.0.1:${await closedPort()}`,
    };
    delete env.JEST_WORKER_ID;
    const child = await run(
      'npx',
      [
        'jest',
        '--selectProjects',
        '@ferry/fault-tests',
        '--testPathPatterns',
        'fault-tests/hostile-input/rabbitmq',
      ],
      { cwd: REPO_ROOT, env, timeout: 150_000 },
    ).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? -1,
        output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
      }),
    );
    // The run fails (correctly) and says why...
    expect(child.code).not.toBe(0);
    expect(child.output).toMatch(/ECONNREFUSED/);
    // ...but must not leave its per-file database on the user's server.
    expect(await leftDatabases(cluster)).toEqual([]);
  });

  it('npm run test:broker-recovery -- <unknown scenario> selects no file', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.JEST_WORKER_ID;
    const listed = await run(
      'npm',
      ['run', 'test:broker-recovery', '--', '--listTests', 'no-such-scenario'],
      {
        cwd: REPO_ROOT,
        env,
        timeout: 120_000,
      },
    ).then(
      ({ stdout }) => ({ code: 0, files: stdout.split('\n').filter((line) => line.endsWith('.test.ts')) }),
      (error: { code?: number; stdout?: string }) => ({
        code: error.code ?? -1,
        files: (error.stdout ?? '').split('\n').filter((line) => line.endsWith('.test.ts')),
      }),
    );
    expect(listed.files).toEqual([]);
  });
});
