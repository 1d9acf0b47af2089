/**
 * Calls of ferry that wait for a connection of the application's pool when the application ends it
 * (`pool.end()` during a shutdown, every connection then busy). node-postgres never answers a
 * waiter of an ended pool: it ends each connection as it comes back and hands none out. On HEAD
 * ferry waited until its own deadline and then failed with a retriable
 * FERRY_DATABASE_UNAVAILABLE (a statement: "no connection within ...") or FERRY_TIMEOUT (a
 * transaction), so a shutdown waited for the deadline and a caller's retry loop went round again.
 * They fail with FERRY_CLOSED, naming the argument that carried the pool, as soon as a connection
 * comes back to the ended pool.
 */
import { Pool, type PoolClient } from 'pg';
import { createEmitter, createOutboxAdmin, fromPg, Inbox, pgTransactions } from '@ferry/core';
import pino from 'pino';
import { closed, failure } from '../../../../test-support/endedConnections';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** Settles once `pool` has `count` callers waiting for a connection (pg-pool's waitingCount). */
async function waiters(pool: Pool, count: number): Promise<void> {
  for (let i = 0; i < 500 && pool.waitingCount < count; i++) await new Promise((r) => setTimeout(r, 10));
  expect(pool.waitingCount).toBe(count);
}

/** What `call` settled with, or 'waits' when it has not within 6 s (before any of its deadlines). */
function settledSoon(call: Promise<unknown>): Promise<unknown> {
  return Promise.race([call, new Promise((resolve) => setTimeout(() => resolve('waits'), 6_000))]);
}

it('fails statements and transactions waiting for a connection with FERRY_CLOSED when the pool is ended', async () => {
  const pool = new Pool({ connectionString: t.url, max: 1 });
  pool.on('error', () => undefined);
  const held: PoolClient = await pool.connect();
  const db = fromPg(pool);
  const admin = createOutboxAdmin(pool, { statementTimeoutMs: 8_000 });
  const emitter = createEmitter({ statementTimeoutMs: 8_000 });
  const inbox = new Inbox(pgTransactions(pool), {
    logger: pino({ level: 'silent' }),
    global: 'shared',
    handlers: { w: async () => {} },
  });
  try {
    const calls = [
      failure(() => db.query('SELECT 1')),
      failure(() => db.transaction((tx) => tx.query('SELECT 1'), { maxWaitMs: 8_000 })),
      failure(() => admin.list()),
      failure(() => emitter.emit(pool, { type: 'waiting.emit', payload: {} })),
      failure(() => inbox.accept({ consumer: 'w', messageId: 'm-1', tenantId: null, payload: {} })),
    ];
    await waiters(pool, calls.length);
    const ended = pool.end();
    held.release();
    await ended;
    // Each within its deadline (8 s; the inbox's 30 s): 'waits' when one passed it, as on HEAD.
    const [statement, transaction, adminList, emitted, accept] = await Promise.all(calls.map(settledSoon));
    expect({ statement, transaction, adminList, emitted, accept }).toEqual({
      statement: closed('pool'),
      transaction: closed('pool'),
      adminList: closed('client'),
      emitted: closed('tx'),
      accept: closed('pool'),
    });
  } finally {
    await inbox.close();
  }
}, 30_000);

it('gives up a transaction waiting for a connection when its signal aborts, and runs nothing of it', async () => {
  const pool = new Pool({ connectionString: t.url, max: 1 });
  const held: PoolClient = await pool.connect();
  const giveUp = new AbortController();
  let ran = false;
  const transaction = failure(() =>
    fromPg(pool).transaction(
      async (tx) => {
        ran = true;
        return tx.query('SELECT 1');
      },
      { signal: giveUp.signal },
    ),
  );
  try {
    await waiters(pool, 1);
    giveUp.abort(new Error('the caller gave up'));
    // On HEAD the wait went on (no maxWaitMs: for as long as the connection stayed busy).
    expect(await settledSoon(transaction)).toEqual({ untyped: 'Error: the caller gave up' });
  } finally {
    held.release();
  }
  // The connection that comes afterwards runs nothing of the abandoned transaction.
  await expect(pool.query('SELECT 1')).resolves.toBeDefined();
  expect(ran).toBe(false);
  await pool.end();
}, 30_000);
