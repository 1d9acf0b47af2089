/** One statement on a connection of its own, for the suite's set-up and checks. */
import { endClientWithin } from '@ferry/core/transport';
import { Client, type QueryResultRow } from 'pg';

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
  const client = new Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query<T & QueryResultRow>(text, values)).rows;
  } finally {
    await endClientWithin(client);
  }
}
