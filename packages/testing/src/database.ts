import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client, escapeIdentifier } from 'pg';
import { FerryConfigError, FerryError, fromPg, migrate } from '@ferry/core';
import {
  endablePool,
  endClientWithin,
  knownKeysOption,
  nonEmptyOption,
  received,
  translateDbError,
  type OptionKeys,
} from '@ferry/core/transport';
import { WaitDeadline } from './waitDeadline';

export interface RecreateDatabaseOptions extends ServerDatabaseOptions {
  /** The application's own migration folders, applied after ferry's, in this order. */
  readonly migrationsDirs?: readonly string[];
}

export interface ServerDatabaseOptions {
  /**
   * The database to connect to while dropping or creating the one in `url` (one cannot drop the
   * database one is connected to): a name on the same server, or a URL (its credentials then
   * used). Default `postgres`; a role that may not connect to `postgres` (a managed or hardened
   * server) names its own, e.g. the database its tests create theirs from.
   */
  readonly through?: string;
}

/**
 * How long connecting to the server may take before a clear error (a server that never answers).
 * Every connection is also ended within CONNECTION_END_WAIT_MS: a server that went silent before
 * it answered the connection's end held the call for ever (endClientWithin, endablePool).
 */
const CONNECT_DEADLINE_MS = 10_000;

/**
 * How long each statement on the server connection (the drop's and create's) may wait for its
 * answer (node-postgres's client-side `query_timeout`, as ferry's LISTEN connection has it): a
 * server that went silent after the connect (a network blackhole, no FIN) held the call and the
 * process for ever (review 102). Far above what a DROP ... WITH (FORCE) or a CREATE DATABASE takes.
 */
const STATEMENT_DEADLINE_MS = 20_000;

/** PostgreSQL's SQLSTATE for a database that does not exist. */
const UNDEFINED_DATABASE = '3D000';

/** PostgreSQL's longest identifier (NAMEDATALEN - 1 bytes); a longer name is silently truncated. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * The database name in `url`: any name PostgreSQL keeps as it is (1 to 63 bytes, no NUL). It goes
 * into DDL only quoted by pg's escapeIdentifier (identifiers cannot be bound), so a reserved word (`order`,
 * `user`) or a mixed-case name is the database of that very name.
 */
function databaseName(url: string): string {
  const name = databaseOf(parsedUrl(url), 'url');
  if (name.length === 0 || name.includes('\0') || Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES) {
    throw new FerryConfigError(
      'url',
      `database name ${JSON.stringify(name)} must be 1 to ${MAX_IDENTIFIER_BYTES} bytes without NUL (PostgreSQL would truncate a longer one)`,
    );
  }
  return name;
}

/** The database `url` names (its path, percent-decoded), else FERRY_CONFIG_INVALID naming `field`. */
function databaseOf(url: URL, field: string): string {
  try {
    return decodeURIComponent(url.pathname.slice(1));
  } catch {
    throw new FerryConfigError(field, `the database name in its path is malformed percent-encoding`);
  }
}

/** `url` as a URL, else FERRY_CONFIG_INVALID naming it (not new URL's TypeError). */
function parsedUrl(url: unknown): URL {
  const text = nonEmptyOption('url', url);
  try {
    return new URL(text);
  } catch {
    throw new FerryConfigError('url', `must be a postgres:// connection URL, got ${received(text)}`);
  }
}

async function onServer(
  url: string,
  through: string | undefined,
  work: (client: Client) => Promise<void>,
): Promise<void> {
  const server = maintenanceUrl(url, through);
  const maintenance = databaseOf(server, 'through');
  if (maintenance === databaseName(url)) {
    // PostgreSQL refuses to drop the database one is connected to (55006).
    throw new FerryConfigError(
      through === undefined ? 'url' : 'through',
      `the database to drop (${JSON.stringify(maintenance)}) is the one connected through to drop it: name another database of the server as \`through\``,
    );
  }
  const client = new Client({
    connectionString: server.toString(),
    connectionTimeoutMillis: CONNECT_DEADLINE_MS,
    query_timeout: STATEMENT_DEADLINE_MS,
  });
  // An error of the client after the work gave up on it (the server closing the connection) is
  // not an uncaught exception.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await endClientWithin(client);
    if ((error as { code?: unknown } | null)?.code === UNDEFINED_DATABASE) {
      // The database connected through does not exist: the option naming it is to correct.
      throw new FerryConfigError(
        'through',
        `the server has no database ${JSON.stringify(maintenance)} to connect through: name one it has`,
      );
    }
    // The server's answer or its absence (refused, silent, a role it refuses): ferry's one
    // translation, FERRY_DATABASE_UNAVAILABLE, not an invalid `url` (review 109).
    throw translateDbError(
      error,
      `connecting to PostgreSQL at ${server.host} (database ${maintenance}, deadline ${CONNECT_DEADLINE_MS} ms)`,
    );
  }
  try {
    await work(client);
  } catch (error) {
    if (!isQueryTimeout(error)) throw error;
    throw new FerryError(
      'FERRY_TIMEOUT',
      `PostgreSQL at ${server.host} (database ${maintenance}) did not answer a statement within ${STATEMENT_DEADLINE_MS} ms`,
      { cause: error },
    );
  } finally {
    await endClientWithin(client);
  }
}

/** node-postgres's error when `query_timeout` passed without the server's answer. */
function isQueryTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/**
 * The URL of the database `through` names (default `postgres`) on the server of `url`. A `through`
 * URL must name the url's server (host, port, `?host=` socket): on another server the drop and
 * create would hit a database of the same name there, not the url's.
 */
function maintenanceUrl(url: string, through: string | undefined): URL {
  if (through !== undefined && typeof through !== 'string') {
    throw new FerryConfigError('through', `must be a database name or URL, got ${received(through)}`);
  }
  if (through !== undefined && through.includes('://')) {
    if (!URL.canParse(through))
      throw new FerryConfigError('through', 'must be a database name or a URL that parses');
    const server = new URL(through);
    const [given, own] = [serverOf(server), serverOf(new URL(url))];
    if (given !== own) {
      throw new FerryConfigError(
        'through',
        `names server ${given}, not the url's ${own}: it must be a database of the url's server`,
      );
    }
    return server;
  }
  const server = new URL(url);
  server.pathname = `/${encodeURIComponent(through ?? 'postgres')}`;
  return server;
}

/** The server a connection URL reaches: host, port (default 5432) and pg's `?host=` socket folder. */
function serverOf(url: URL): string {
  const socket = url.searchParams.get('host');
  return `${url.hostname.toLowerCase()}:${url.port || '5432'}${socket === null ? '' : ` (host=${socket})`}`;
}

/**
 * Drops database `name`. Connections still closing get `graceMs` to leave on their own first: a
 * pg pool's end() resolves before its clients' sockets close, and a backend terminated under a
 * client that is ending makes the pool emit an 'error' nobody listens to (an uncaught exception
 * in the test process). Whatever is still connected after that is forced off.
 */
async function dropNamed(client: Client, name: string, graceMs = 2_000): Promise<void> {
  // Real time (realTimers), as every wait of @ferry/testing: Date.now() stands still under fake timers.
  const grace = new WaitDeadline(graceMs);
  try {
    while (!grace.expired) {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
      if ((rows[0]?.n ?? 0) === 0) break;
      await grace.pause(25);
    }
  } finally {
    grace.end();
  }
  await client.query(`DROP DATABASE IF EXISTS ${escapeIdentifier(name)} WITH (FORCE)`);
}

/**
 * Drops and recreates the database named in `url`, then applies ferry's migrations and the
 * application's. For tests and demos that must start empty; never point it at real data.
 */
export async function recreateDatabase(url: string, options: RecreateDatabaseOptions = {}): Promise<void> {
  options = knownKeysOption('', options, {
    migrationsDirs: true,
    through: true,
  } satisfies OptionKeys<RecreateDatabaseOptions>);
  const dirs: unknown = options.migrationsDirs ?? [];
  if (!Array.isArray(dirs) || dirs.some((dir) => typeof dir !== 'string' || dir.length === 0)) {
    throw new FerryConfigError('migrationsDirs', `must be an array of folder paths, got ${received(dirs)}`);
  }
  const name = databaseName(url);
  await onServer(url, options.through, async (client) => {
    await dropNamed(client, name);
    await client.query(`CREATE DATABASE ${escapeIdentifier(name)}`);
  });
  const { pool, end } = endablePool({
    connectionString: url,
    max: 2,
    connectionTimeoutMillis: CONNECT_DEADLINE_MS,
  });
  try {
    const db = fromPg(pool);
    await migrate(db);
    for (const migrationsDir of options.migrationsDirs ?? []) await migrate(db, { migrationsDir });
  } finally {
    await end();
  }
}

/** Drops the database named in `url` (closing its connections; see dropNamed). */
export async function dropDatabase(url: string, options: ServerDatabaseOptions = {}): Promise<void> {
  options = knownKeysOption('', options, { through: true } satisfies OptionKeys<ServerDatabaseOptions>);
  const name = databaseName(url);
  await onServer(url, options.through, (client) => dropNamed(client, name));
}

/** The nearest folder at or above `start` that contains `relative` (e.g. an app's `migrations`). */
export function findUp(start: string, relative: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, relative))) return dir;
    if (dir === path.dirname(dir)) throw new Error(`no folder above ${start} contains ${relative}`);
  }
}
