// test-support/templateDatabase.js (jest's globalSetup / globalTeardown) and the copies
// test-support/database.ts makes of the run's template, on the real PostgreSQL.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { checkSchema } from '@ferry/core';
import { Client } from 'pg';
import { listened } from '../../test-support/oneStatement';
import { createTestDatabase, serverUrl } from '../../test-support/database';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const template = require('../../test-support/templateDatabase') as {
  globalSetup(): Promise<void>;
  globalTeardown(): Promise<void>;
  PREFIX: string;
};

const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
const VARIABLES = ['FERRY_TEST_TEMPLATE', 'FERRY_TEST_TEMPLATE_SERVER'] as const;

async function withServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = listened(new Client({ connectionString: serverUrl() }));
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const databases = (like: string) =>
  withServer(async (c) =>
    (
      await c.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname',
        [like],
      )
    ).rows.map((r) => r.datname),
  );

describe('the run template database', () => {
  const saved = VARIABLES.map((name) => process.env[name]);
  afterEach(() => {
    VARIABLES.forEach((name, i) => {
      const value = saved[i];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    });
  });

  it("globalSetup drops this machine's templates whose run is gone, and no other", async () => {
    const suffix = Math.random().toString(16).slice(2, 8);
    // A pid no process has (above Linux's pid_max), this worker's own, and another machine's.
    const gone = `${template.PREFIX}${HOST}_4194305_${suffix}`;
    const live = `${template.PREFIX}${HOST}_${process.pid}_${suffix}`;
    const elsewhere = `${template.PREFIX}00000000_4194305_${suffix}`;
    await withServer(async (c) => {
      for (const name of [gone, live, elsewhere]) await c.query(`CREATE DATABASE ${name}`);
    });
    try {
      await template.globalSetup();
      expect(process.env.FERRY_TEST_TEMPLATE).toMatch(
        new RegExp(`^${template.PREFIX}${HOST}_${process.pid}_`),
      );
      expect(process.env.FERRY_TEST_TEMPLATE_SERVER).toBe(serverUrl());
      const left = (await databases(template.PREFIX)).filter((name) => name.endsWith(suffix));
      expect(left).toEqual([elsewhere, live].sort());
    } finally {
      await withServer(async (c) => {
        for (const name of [gone, live, elsewhere]) await c.query(`DROP DATABASE IF EXISTS ${name}`);
      });
    }
  });

  it('test databases are copies of a template migrated once; globalTeardown drops it', async () => {
    await template.globalSetup();
    const name = process.env.FERRY_TEST_TEMPLATE as string;
    const first = await createTestDatabase();
    const second = await createTestDatabase();
    const empty = await createTestDatabase({ migrate: false });
    try {
      expect(await databases(name)).toEqual([name]);
      for (const t of [first, second]) await expect(checkSchema(t.db)).resolves.toEqual({ unrecognized: [] });
      const tables = await empty.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`,
      );
      expect(tables[0]?.n).toBe(0);
      // Closed to connections: a session on it would make every copy fail.
      const allowed = await withServer(
        async (c) =>
          (await c.query('SELECT datallowconn FROM pg_database WHERE datname = $1', [name])).rows[0],
      );
      expect(allowed).toEqual({ datallowconn: false });
    } finally {
      await Promise.all([first.drop(), second.drop(), empty.drop()]);
      await template.globalTeardown();
    }
    expect(await databases(name)).toEqual([]);
  });
});
