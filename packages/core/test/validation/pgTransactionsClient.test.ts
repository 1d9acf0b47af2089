/**
 * pgTransactions is the transaction adapter of a node-postgres Pool: each handler transaction
 * checks a connection out of it (`pool.connect()`) while ferry's own statements (acceptance,
 * claims, lease renewals) run on its other connections. Given a single client instead (a live
 * `Client`, or a `PoolClient` checked out of a pool), it was accepted on HEAD and each handler
 * transaction failed later with node-postgres' untyped "Client has already been connected. You
 * cannot reuse a client.". Serialising the transactions on the one client would not make it
 * safe: the lease renewals of a running handler would wait behind its transaction, or run inside
 * it and roll back with it. So a single client is refused at construction, FerryConfigError on
 * `pool` saying a Pool is needed and why, and nothing is sent on it. fromPg, emit and the admins
 * still take a client (endedClient.test.ts).
 */
import { Pool, type Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { FerryConfigError, fromPg, pgTransactions } from '@ferry/core';
import { connectedClient } from '../../../../test-support/endedConnections';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The statements sent on `client` from now on. */
function sentOn(client: { query: unknown }): string[] {
  const sent: string[] = [];
  const query = (client.query as (...args: unknown[]) => unknown).bind(client);
  client.query = (...args: unknown[]) => {
    sent.push(String(typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text));
    return query(...args);
  };
  return sent;
}

function refusal(build: () => unknown): unknown {
  try {
    build();
    return 'accepted';
  } catch (error) {
    if (!(error instanceof FerryConfigError)) return { untyped: String(error) };
    return { code: error.code, option: error.option, message: error.message };
  }
}

const refusedAsClient = {
  code: 'FERRY_CONFIG_INVALID',
  option: 'pool',
  message: expect.stringMatching(/must be a node-postgres Pool, got a single client .*lease renewals/),
};

it('refuses a live, connected Client at construction, saying a Pool is needed and why; nothing is sent on it', async () => {
  const client: Client = await connectedClient(t.url);
  const sent = sentOn(client);
  try {
    expect(refusal(() => pgTransactions(client as unknown as Pool))).toEqual(refusedAsClient);
    expect(sent).toEqual([]);
    // The client is left as it was: fromPg takes it.
    expect(await fromPg(client as unknown as Pool).query('SELECT 1 AS n')).toEqual([{ n: 1 }]);
  } finally {
    await client.end();
  }
});

it('refuses a PoolClient checked out of a pool the same way', async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
  const client = await pool.connect();
  const sent = sentOn(client);
  try {
    expect(refusal(() => pgTransactions(client as unknown as Pool))).toEqual(refusedAsClient);
    expect(sent).toEqual([]);
  } finally {
    client.release();
    await pool.end();
  }
});

it('takes the Pool itself: a handler transaction runs on a connection of its own', async () => {
  const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
  try {
    const adapter = pgTransactions(pool);
    expect(await adapter.transaction(async (client) => (await client.query('SELECT 2 AS n')).rows)).toEqual([
      { n: 2 },
    ]);
  } finally {
    await pool.end();
  }
});
