/**
 * A fresh PostgreSQL database per test file: created from the server at
 * FERRY_DATABASE_URL, migrated with ferry's migrator, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import { Client, type Pool, type PoolConfig } from 'pg';
import { PrismaClient } from '../generated/prisma/client';
import { fromPrisma, migrate, type SqlExecutor } from '@ferry/core';
import { endClientWithin } from '@ferry/core/transport';
import { settlesWithin } from '@ferry/core/transport';
import { dropDatabase } from '@ferry/testing';

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  readonly prisma: PrismaClient;
  readonly db: SqlExecutor;
  /** A new Prisma client on the same database (its own pool), e.g. for a second relay. */
  newClient(poolOptions?: TestPoolOptions, adapterOptions?: TestAdapterOptions): PrismaClient;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  return process.env.FERRY_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
}

/**
 * FERRY_DATABASE_URL as a URL, checked before anything is made on its server: pg also connects
 * with URLs WHATWG's parser refuses (`postgresql://user@/db?host=/run/postgresql`, several hosts),
 * where `CREATE DATABASE` ran and only the new database's URL failed, a bare "Invalid URL" that
 * left the database behind (review 120). The error names the variable, never its text (a password).
 */
function parsedServerUrl(): URL {
  try {
    return new URL(serverUrl());
  } catch {
    throw new Error(
      'FERRY_DATABASE_URL is not a URL the suites can name a database in (one host, its database in the path); ' +
        'for a Unix socket write postgresql:///<database>?host=<socket folder>&user=<role>',
    );
  }
}

function withDatabase(database: string): string {
  const parsed = parsedServerUrl();
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The bound of each cleanup step (a client's disconnect, the drop) of a set-up that failed. */
const CLEANUP_STEP_MS = 10_000;

/** How long connecting to the test server may take: a server that never answers is an error naming it. */
const CONNECT_DEADLINE_MS = 10_000;

export async function adminQuery(text: string, values: unknown[] = []): Promise<void> {
  const server = parsedServerUrl();
  const client = new Client({ connectionString: serverUrl(), connectionTimeoutMillis: CONNECT_DEADLINE_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await endClientWithin(client);
    throw new Error(
      `FERRY_DATABASE_URL: could not connect to PostgreSQL at ${server.host || (server.searchParams.get('host') ?? 'localhost')} within ${CONNECT_DEADLINE_MS} ms: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    await client.query(text, values);
  } finally {
    // As every connection ferry ends: within CONNECTION_END_WAIT_MS, then its socket destroyed.
    await endClientWithin(client);
  }
}

/** Pool and driver options of a test's Prisma client (pg's PoolConfig: max, timeouts, ...). */
export type TestPoolOptions = Omit<PoolConfig, 'connectionString'>;

/** PrismaPg's own options (e.g. `statementNameGenerator`). */
export type TestAdapterOptions = ConstructorParameters<typeof PrismaPg>[1];

/**
 * The one Prisma client factory of the tests and fault suites: PrismaPg on `url` with explicit pg
 * pool / driver options (default pool size 10) and the adapter's own options.
 */
export function prismaFor(
  url: string,
  pool: TestPoolOptions = {},
  adapter?: TestAdapterOptions,
): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ max: 10, ...pool, connectionString: url }, adapter) });
}

/** A Prisma client on a pg pool the caller built and ends (e.g. one shared with ferry's `fromPg`). */
export function prismaOnPool(pool: Pool, adapter?: TestAdapterOptions): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool, adapter) });
}

/**
 * `adapter`: PrismaPg's options for every Prisma client of the database (`prisma` and
 * `newClient()`), e.g. `{ statementNameGenerator: ferryStatementNames }`.
 */
export async function createTestDatabase(
  options: { migrate?: boolean; adapter?: TestAdapterOptions } = {},
): Promise<TestDatabase> {
  const name = `ferry_t_${randomBytes(6).toString('hex')}`;
  // Before CREATE DATABASE: a URL that cannot name the new database fails here (review 120).
  const url = withDatabase(name);
  const template = (options.migrate ?? true) ? await migratedTemplate() : undefined;
  // The names are generated from hex digits only; identifiers cannot be bound as parameters.
  await adminQuery(
    template === undefined ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`,
  );
  const clients: PrismaClient[] = [];
  const newClient = (poolOptions?: TestPoolOptions, adapterOptions = options.adapter) => {
    const client = prismaFor(url, poolOptions, adapterOptions);
    clients.push(client);
    return client;
  };
  const disconnectAll = () =>
    Promise.all(clients.map((client) => settlesWithin(client.$disconnect(), CLEANUP_STEP_MS)));
  // Through the database the test database was created from: a role may not connect to `postgres`.
  const dropIt = () => dropDatabase(url, { through: serverUrl() });
  try {
    const prisma = newClient();
    const db = fromPrisma(prisma);
    if ((options.migrate ?? true) && template === undefined) await migrate(db);
    return {
      name,
      url,
      prisma,
      db,
      newClient,
      async drop() {
        await disconnectAll();
        await dropIt();
      },
    };
  } catch (error) {
    // A set-up that failed after CREATE DATABASE (the role may not connect to the new database, a
    // migration failed) leaves nothing on the user's server: its clients are disconnected and the
    // database dropped, each step bounded, and the set-up's own error is thrown (review 75).
    await disconnectAll();
    await settlesWithin(dropIt(), CLEANUP_STEP_MS);
    throw error;
  }
}

/**
 * The run's migrated template database (test-support/templateDatabase.js names it in jest's
 * globalSetup and drops it in its globalTeardown), built by the first file that needs it: under
 * an advisory lock, migrated as `<name>_build`, renamed, and closed to connections (a copy fails
 * while anyone is connected to its template). Undefined outside such a run or when the tests'
 * server is not the one the run started with (a test pointing a child process elsewhere).
 */
async function migratedTemplate(): Promise<string | undefined> {
  const name = process.env.FERRY_TEST_TEMPLATE;
  if (name === undefined || !/^ferrytemplate_[a-z0-9_]+$/.test(name)) return undefined;
  if (process.env.FERRY_TEST_TEMPLATE_SERVER !== serverUrl()) return undefined;
  let ready = templatesReady.get(name);
  if (ready === undefined) {
    ready = buildTemplate(name).catch((error: unknown) => {
      templatesReady.delete(name);
      throw error;
    });
    templatesReady.set(name, ready);
  }
  await ready;
  return name;
}

/** Templates this process built or found, by name. */
const templatesReady = new Map<string, Promise<void>>();

async function buildTemplate(name: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl(), connectionTimeoutMillis: CONNECT_DEADLINE_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    // Session-level: held until unlocked or the connection ends (a worker killed mid-build).
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount !== 0) return;
    const build = `${name}_build`;
    await client.query(`DROP DATABASE IF EXISTS ${build} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${build}`);
    const prisma = prismaFor(withDatabase(build), { max: 2 });
    try {
      await migrate(fromPrisma(prisma));
    } finally {
      await settlesWithin(prisma.$disconnect(), CLEANUP_STEP_MS);
    }
    await client.query(`ALTER DATABASE ${build} RENAME TO ${name}`);
    await client.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
  } finally {
    await endClientWithin(client);
  }
}

/** A database URL on the test server with a unique name, for code that creates its own database. */
export function scratchDatabaseUrl(prefix: string): string {
  return withDatabase(`${prefix}_${randomBytes(4).toString('hex')}`);
}
