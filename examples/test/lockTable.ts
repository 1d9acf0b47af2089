/** Holding an example's table locked so that a run is mid-way when a test signals it. */
import { Client } from 'pg';

/**
 * Locks `table` of the database at `url` once the example's migration created it, in an open
 * transaction of its own (ACCESS EXCLUSIVE): the example's writes to it wait until the returned
 * client rolls back. Tries again every 20 ms until `deadline` (epoch ms).
 */
export async function lockTableOnceCreated(url: string, table: string, deadline: number): Promise<Client> {
  for (;;) {
    const client = new Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('BEGIN');
      await client.query(`LOCK TABLE ${client.escapeIdentifier(table)} IN ACCESS EXCLUSIVE MODE`);
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
