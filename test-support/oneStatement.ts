/**
 * The suite's raw node-postgres connections: `listened` gives a Client or Pool a test builds its
 * 'error' listener, and `oneStatement` runs one statement on a connection of its own.
 */
import type { EventEmitter } from 'node:events';
import { endClientWithin } from '@ferry/core/transport';
import { Client, type QueryResultRow } from 'pg';

/** The last 'error' each connection given to `listened` emitted. */
const lastErrors = new WeakMap<object, Error>();

/**
 * `connection` (a pg Client or Pool as the test built it) with an 'error' listener that records
 * the error and never throws. node-postgres emits 'error' on a Client for anything after connect
 * (its backend terminated, an idle-in-transaction or statement timeout's FATAL, `DROP DATABASE
 * ... WITH (FORCE)`, a crashed server) and on a Pool for an idle connection's end; with nobody
 * listening that is an unhandled error that fails whatever test file holds the connection (CI:
 * "Unhandled error. Connection terminated unexpectedly"). The connection's next statement still
 * fails; `connectionError` tells a test what was emitted.
 */
export function listened<T extends EventEmitter>(connection: T): T {
  connection.on('error', (error: unknown) => {
    lastErrors.set(connection, error instanceof Error ? error : new Error(String(error)));
  });
  return connection;
}

/** The last 'error' `connection` (given to `listened`) emitted, if any. */
export function connectionError(connection: object): Error | undefined {
  return lastErrors.get(connection);
}

/**
 * The rows of `text` on a new connection to `url`, ended afterwards (within ferry's own bound for
 * an end, then its socket destroyed). A backend that ends while the statement runs (a crashed
 * server ends every backend with a warning and no error answer, a failover, a terminate) fails
 * the statement; the connection's `error` event that comes with it is not an unhandled error that
 * fails whatever test file happened to be asking (CI stop 50: review 69's wait for crash recovery).
 */
export async function oneStatement<T extends object>(
  url: string,
  text: string,
  values: unknown[] = [],
  connectTimeoutMs = 5_000,
): Promise<T[]> {
  const client = listened(new Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs }));
  try {
    await client.connect();
    return (await client.query<T & QueryResultRow>(text, values)).rows;
  } finally {
    await endClientWithin(client);
  }
}
