/**
 * Review 106 (from the last note's list: "close() during a lasting application-pool outage not
 * tested"). The worker's handler transactions get no session for a while (the application's pool
 * points at a database that does not exist, is held busy past transactionMaxWaitMs, or at a
 * server that accepts connections and never answers) while ferry's own statements, on another
 * pool, work. close() must return within its bound and leave no receipt claimed: every receipt
 * given back (PENDING, no attempt spent, no handler run), none left to its lease. Held on main
 * (no fix): each shape is a regression test.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { fromPg, pgTransactions, type TransactionAdapter } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { busyApplicationPool, makeInbox, message, waitFor } from './inbox/helpers';

jest.setTimeout(90_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
beforeEach(async () => {
  await t.db.execute('TRUNCATE ferry_inbox_receipts');
});

const WORKER = {
  concurrency: 2,
  retryBaseMs: 20,
  retryMaxMs: 100,
  transactionMaxWaitMs: 300,
  shutdownTimeoutMs: 2_000,
};
/** A liveness bound, not a timing threshold: close() is bounded by shutdownTimeoutMs plus statement deadlines. */
const CLOSE_BOUND_MS = 45_000;

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Accepts three receipts, starts the worker, waits for the outage, closes; the receipts as left. */
async function closeDuringOutage(adapter: TransactionAdapter<PoolClient>) {
  let ran = 0;
  const inbox = makeInbox(adapter, {
    worker: WORKER,
    handlers: {
      orders: async () => {
        ran += 1;
      },
    } as never,
  });
  for (let i = 0; i < 3; i += 1) await inbox.accept(message());
  inbox.start();
  await waitFor('the outage to be seen', async () => inbox.sessionOutage !== null);
  const closed = await Promise.race([
    inbox.close().then(() => 'closed'),
    new Promise((resolve) => setTimeout(() => resolve('close() still pending'), CLOSE_BOUND_MS).unref()),
  ]);
  const rows = await t.db.query<{ status: string; attempts: number; leased: boolean }>(
    `SELECT status, attempts, lease_expires_at IS NOT NULL AS leased FROM ferry_inbox_receipts ORDER BY created_at, message_id`,
  );
  return { closed, ran, rows };
}

const GIVEN_BACK = Array.from({ length: 3 }, () => ({ status: 'PENDING', attempts: 0, leased: false }));

describe('review106: close() during a lasting outage of the application pool', () => {
  it('a database that does not exist', async () => {
    const url = new URL(t.url);
    url.pathname = '/ferry_review106_missing';
    const missing = listened(new Pool({ connectionString: url.toString(), max: 2 }));
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    try {
      const outcome = await closeDuringOutage({ ...pgTransactions(missing), db: fromPg(ferryPool) });
      expect(outcome).toEqual({ closed: 'closed', ran: 0, rows: GIVEN_BACK });
    } finally {
      await missing.end();
      await ferryPool.end();
    }
  });

  it('a pool held busy past transactionMaxWaitMs', async () => {
    const app = await busyApplicationPool(t);
    try {
      const outcome = await closeDuringOutage(app.adapter);
      expect(outcome).toEqual({ closed: 'closed', ran: 0, rows: GIVEN_BACK });
    } finally {
      await app.end();
    }
  });

  it('a server that accepts connections and never answers', async () => {
    const silent = await silentServer();
    const url = new URL(t.url);
    url.port = String(silent.port);
    const silentPool = new Pool({ connectionString: url.toString(), max: 2 });
    silentPool.on('error', () => undefined);
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    try {
      const outcome = await closeDuringOutage({ ...pgTransactions(silentPool), db: fromPg(ferryPool) });
      expect(outcome).toEqual({ closed: 'closed', ran: 0, rows: GIVEN_BACK });
    } finally {
      await silent.close();
      await silentPool.end().catch(() => undefined);
      await ferryPool.end();
    }
  });
});
