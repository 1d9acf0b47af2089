import { Client } from 'pg';
import { isFerryError } from '@ferry/core';
import { isBatchWideFailure } from '@ferry/core/transport';

/** A client connected to `url` and used once, so what is built on it is built on a live client. */
export async function connectedClient(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  await client.query('SELECT 1');
  return client;
}

/**
 * The error `work` fails with, as a comparable shape (code, retriable, `details.field`, whether a
 * transport takes it for a batch-wide failure), for the cases of a pool or client the application
 * ended (endedPool.test.ts, endedClient.test.ts).
 */
export async function failure(work: () => unknown): Promise<unknown> {
  try {
    await work();
    return 'no error';
  } catch (error) {
    if (!isFerryError(error)) return { untyped: String(error) };
    return {
      code: error.code,
      retriable: error.retriable,
      field: error.details.field,
      batchWide: isBatchWideFailure(error),
    };
  }
}

/** A call on a pool or client ended after ferry was given it: FERRY_CLOSED, naming `field`. */
export function closed(field?: string) {
  return { code: 'FERRY_CLOSED', retriable: false, field, batchWide: true };
}

/** A node-postgres client's (or pool's) `query`, as ferry calls it: text or config, promise back. */
type Query = (config: unknown, ...rest: unknown[]) => Promise<unknown>;

/**
 * Makes the application end `client` (its `end()`) once, at the first statement whose text
XX`'after'` its answer came and before it is handed on (so the client is ended
 * between two statements of a transaction), or `'during'` it (sent, not yet answered).
 */
export function endsAt(
  client: { query: unknown; end(): Promise<void> },
  at: 'after' | 'during',
  text: RegExp,
): void {
  const query = (client.query as Query).bind(client);
  let armed = true;
  client.query = (config: unknown, ...rest: unknown[]) => {
    const sent = typeof config === 'string' ? config : ((config as { text?: string } | null)?.text ?? '');
    if (!armed || !text.test(sent)) return query(config, ...rest);
    armed = false;
    const answered = query(config, ...rest);
    if (at === 'during') {
      void client.end();
      return answered;
    }
    return answered.then(async (result) => {
      await client.end();
      return result;
    });
  };
}
