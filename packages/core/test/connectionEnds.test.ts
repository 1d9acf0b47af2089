/**
 * Every connection ferry ends is ended within a deadline. Ending a node-postgres connection sends
 * Terminate and a FIN, then waits for the server's FIN; a server that went silent meanwhile (a
 * network blackhole) never sends it, and the half-closed socket holds the process for ever. Past
 * CONNECTION_END_WAIT_MS the socket is destroyed (endClientWithin); PostgreSQL ends the session
 * when it notices. Each case counts this process's sockets to the proxy, so a socket left
 * half-closed shows, whatever PostgreSQL still holds.
 */
import pg from 'pg';
import { createEmitter, fromPg, isFerryError } from '@ferry/core';
import { withDeadlines } from '../src/sql/statementDeadline';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../test-support/commitSwallowingProxy';
import { outcomeWithin } from '../../../test-support/deadlines';
import { halfOpenProxy, type HalfOpenProxy } from '../../../test-support/halfOpenProxy';
import { gate } from '../../../test-support/holds';
import { openSocketsTo } from '../../../test-support/openSockets';
import { adminQuery, createTestDatabase, serverUrl, type TestDatabase } from '../../../test-support/database';

const STATEMENT_TIMEOUT_MS = 500;
/** Far above every deadline here (CONNECTION_END_WAIT_MS is 1 s): a socket still open then is held. */
const HANG_MS = 10_000;

let t: TestDatabase;
const ends: (() => unknown)[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await Promise.resolve(end()).catch(() => undefined);
});
afterAll(async () => {
  await t.drop();
});

/** Resolves once this process holds `count` sockets to `port`; the count it holds after HANG_MS otherwise. */
async function socketsSettleAt(port: number, count: number): Promise<number> {
  for (const until = Date.now() + HANG_MS; Date.now() < until;) {
    if (openSocketsTo(port) === count) return count;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return openSocketsTo(port);
}

it('the connection of its own a lost COMMIT is asked on is ended within a deadline when the server goes silent', async () => {
  const proxy: CommitSwallowingProxy = await commitSwallowingProxy();
  ends.push(() => proxy.close());
  const client = new pg.Client({ connectionString: proxy.url(t.url) });
  client.on('error', () => undefined); // the proxy's doing
  await client.connect();
  ends.push(() => client.end());
  const emitter = createEmitter({ statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  await emitter.emit(client, { type: 'silent-end.warm', payload: {} });
  proxy.silenceEnds();
  proxy.arm();
  const outcome = await outcomeWithin(
    emitter.emitMany(client, [{ type: 'silent-end', payload: { i: 1 } }]),
    HANG_MS,
  );
  expect(proxy.swallowed()).toBe(true);
  // Asked on a connection of its own (which answered), then that connection was ended.
  expect(outcome).toMatchObject({ value: { ids: [expect.any(String)] } });
  // Only the application's client (stuck behind its lost answer) is left: the lookup's connection,
  // whose Terminate the silent server never answered, was destroyed.
  expect(await socketsSettleAt(proxy.port, 1)).toBe(1);
});

it('a pool connection ferry gives up on is ended within a deadline when the server went silent', async () => {
  const proxy: HalfOpenProxy = await halfOpenProxy(new URL(t.url));
  ends.push(() => proxy.close());
  const pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 2 });
  pool.on('error', () => undefined); // the proxy's doing
  ends.push(() => pool.end());
  const port = Number(new URL(proxy.url(t.url)).port);
  const held = gate();
  ends.push(held.open);
  const db = withDeadlines(fromPg(pool), STATEMENT_TIMEOUT_MS);
  const outcome = await outcomeWithin(
    db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      proxy.silence();
      await held.promise; // busy elsewhere, no statement in flight, past the deadline
    }),
    HANG_MS,
  );
  expect(outcome).not.toBe('hung');
  expect(isFerryError((outcome as { error: unknown }).error, 'FERRY_TIMEOUT')).toBe(true);
  // Given up, the connection is destroyed, not returned: its end waited for the silent server.
  expect(await socketsSettleAt(port, 0)).toBe(0);
});

it("the test-support adminQuery's connection is ended within a deadline when the server goes silent", async () => {
  const proxy: CommitSwallowingProxy = await commitSwallowingProxy();
  ends.push(() => proxy.close());
  proxy.silenceEnds();
  const given = process.env.FERRY_DATABASE_URL;
  process.env.FERRY_DATABASE_URL = proxy.url(serverUrl());
  ends.push(() => {
    if (given === undefined) delete process.env.FERRY_DATABASE_URL;
    else process.env.FERRY_DATABASE_URL = given;
  });
  // On HEAD its end() waited for a FIN the silent server never sends: no answer within HANG_MS.
  expect(await outcomeWithin(adminQuery('SELECT 1'), HANG_MS / 2)).toEqual({ value: undefined });
  expect(await socketsSettleAt(proxy.port, 0)).toBe(0);
});
