import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { FerryConfigError, fromPg, migrate } from '@ferry/core';
import { knownKeysOption, received, type OptionKeys } from '@ferry/core/transport';

export interface RecreateDatabaseOptions {
  /** The application's own migration folders, applied after ferry's, in this order. */
  readonly migrationsDirs?: readonly string[];
}

/** The database name in `url`, checked to be a plain identifier (identifiers cannot be bound). */
function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new FerryConfigError('url', `database name "${name}" must be a lower-case identifier`);
  }
  return name;
}

async function onServer(url: string, work: (client: Client) => Promise<void>): Promise<void> {
  const server = new URL(url);
  server.pathname = '/postgres';
  const client = new Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Drops database `name`. Connections still closing get `graceMs` to leave on their own first: a
 * pg pool's end() resolves before its clients' sockets close, and a backend terminated under a
 * client that is ending makes the pool emit an 'error' nobody listens to (an uncaught exception
 * in the test process). Whatever is still connected after that is forced off.
 */
async function dropNamed(client: Client, name: string, graceMs = 2_000): Promise<void> {
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
      [name],
    );
    if ((rows[0]?.n ?? 0) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * Drops and recreates the database named in `url`, then applies ferry's migrations and the
 * application's. For tests and demos that must start empty; never point it at real data.
 */
export async function recreateDatabase(url: string, options: RecreateDatabaseOptions = {}): Promise<void> {
  knownKeysOption('', options, { migrationsDirs: true } satisfies OptionKeys<RecreateDatabaseOptions>);
  const dirs: unknown = options.migrationsDirs ?? [];
  if (!Array.isArray(dirs) || dirs.some((dir) => typeof dir !== 'string' || dir.length === 0)) {
    throw new FerryConfigError('migrationsDirs', `must be an array of folder paths, got ${received(dirs)}`);
  }
  const name = databaseName(url);
  await onServer(url, async (client) => {
    await dropNamed(client, name);
    await client.query(`CREATE DATABASE ${name}`);
  });
  const pool = new Pool({ connectionString: url, max: 2 });
  try {
    const db = fromPg(pool);
    await migrate(db);
    for (const migrationsDir of options.migrationsDirs ?? []) await migrate(db, { migrationsDir });
  } finally {
    await pool.end();
  }
}

/** Drops the database named in `url` (closing its connections; see dropNamed). */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  await onServer(url, (client) => dropNamed(client, name));
}

/** The nearest folder at or above `start` that contains `relative` (e.g. an app's `migrations`). */
export function findUp(start: string, relative: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, relative))) return dir;
    if (dir === path.dirname(dir)) throw new Error(`no folder above ${start} contains ${relative}`);
  }
}
