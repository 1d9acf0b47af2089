/**
 * Review 120: a FERRY_DATABASE_URL that pg accepts but WHATWG `URL` does not, the fault suites'
 * per-file database (`test-support/database.ts`) on a user's own PostgreSQL.
 *
 * `postgresql://user@/db?host=/run/postgresql` (a Unix socket, pg's documented form) and
 * `postgresql://user@h1:5432,h2:5432/db` (several hosts) connect with pg, so `adminQuery` ran
 * `CREATE DATABASE ferry_t_…`; only then did `createTestDatabase()` build the new database's URL
 * with `new URL()`, which threw a bare "Invalid URL" TypeError (naming no variable) outside the
 * set-up's cleanup, so every suite file left its database on the user's server. Such a URL must
 * be refused before anything is created, naming FERRY_DATABASE_URL and not echoing its password.
 */
import { join } from 'node:path';
import { createTestDatabase } from '../../test-support/database';
import { PrivateCluster } from './privatePostgres';

jest.setTimeout(120_000);

const PASSWORD = 'review120-S3cret';

async function leftDatabases(cluster: PrivateCluster): Promise<string[]> {
  const rows = await cluster.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'ferry_t_%' ORDER BY datname`,
  );
  return rows.map((row) => row.datname);
}

async function withDatabaseUrl<T>(url: string, work: () => Promise<T>): Promise<T> {
  const saved = process.env.FERRY_DATABASE_URL;
  process.env.FERRY_DATABASE_URL = url;
  try {
    return await work();
  } finally {
    if (saved === undefined) delete process.env.FERRY_DATABASE_URL;
    else process.env.FERRY_DATABASE_URL = saved;
  }
}

describe('review120: a FERRY_DATABASE_URL pg accepts and URL does not', () => {
  let cluster: PrivateCluster;

  beforeAll(async () => {
    cluster = await PrivateCluster.create('review120');
    await cluster.query(`ALTER ROLE postgres PASSWORD '${PASSWORD}'`);
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('the form the refusal suggests for a Unix socket is honoured: created and dropped there', async () => {
    const socket = join(cluster.root, 'socket');
    const url = `postgresql:///postgres?host=${socket}&port=${cluster.port}&user=postgres&password=${PASSWORD}`;
    const created = await withDatabaseUrl(url, async () => {
      const database = await createTestDatabase();
      const [row] = await database.prisma.$queryRawUnsafe<{ db: string }[]>(
        'SELECT current_database() AS db',
      );
      const during = await leftDatabases(cluster);
      await database.drop();
      return { name: database.name, current: row?.db, during };
    });
    expect(created.current).toBe(created.name);
    expect(created.during).toEqual([created.name]);
    expect(await leftDatabases(cluster)).toEqual([]);
  });

  const urls: [string, () => string][] = [
    [
      'a Unix socket in ?host= after user@',
      () =>
        `postgresql://postgres:${PASSWORD}@/postgres?host=${join(cluster.root, 'socket')}&port=${cluster.port}`,
    ],
    [
      'two hosts',
      () => `postgresql://postgres:${PASSWORD}@127.0.0.1:${cluster.port},127.0.0.1:${cluster.port}/postgres`,
    ],
  ];

  it.each(urls)('%s: refused before CREATE DATABASE, naming the variable, no password', async (_, url) => {
    const outcome = await withDatabaseUrl(url(), () =>
      createTestDatabase().then(
        async (database) => {
          await database.drop();
          return 'created';
        },
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
    );
    const left = await leftDatabases(cluster);
    for (const name of left) await cluster.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    expect({ left, namesVariable: outcome.includes('FERRY_DATABASE_URL') }).toEqual({
      left: [],
      namesVariable: true,
    });
    expect(outcome).not.toContain(PASSWORD);
  });
});
