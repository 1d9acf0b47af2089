/**
 * Review 102 (inbox worker shutdown): a claim taken and then never run is given back, its attempt
 * returned, as the poll loop's queue and a late runOnce() claim are (review 87).
 *
 * What I did: worker.maxAttempts 1, the application's pool (pgTransactions) has its one connection
 * busy with other work, so the claimed receipt's handler transaction waits for a connection
 * (transactionMaxWaitMs) when close() runs out of shutdownTimeoutMs.
 *
 * What happened on main: close() aborted the waiting transaction and returned, leaving the claim to
 * its lease with its only attempt spent although no handler had run (PROCESSING, attempts 1): the
 * next worker's sweep made it DEAD ("attempts exhausted").
 *
 * What should happen: a receipt whose handler had not started when shutdown interrupted it is
 * given back before close() returns (PENDING, attempts 0, no lease), its handler never runs in the
 * closed worker, and the next worker runs it. processReceipt given a shutdown signal already
 * aborted (dispatch() after the abort) runs no handler and gives the claim back too.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { claimReceipts } from '../src/inbox/sql/claim';
import { processReceipt } from '../src/inbox/process';
import {
  busyApplicationPool,
  makeInbox,
  message,
  receiptRow,
  sqlProcessDeps,
  waitFor,
} from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const WORKER = {
  concurrency: 1,
  maxAttempts: 1,
  shutdownTimeoutMs: 100,
  leaseMs: 2_000,
  transactionMaxWaitMs: 30_000,
};

it('close() gives back a claim whose handler transaction was still waiting for a connection; the next worker runs it', async () => {
  const app = await busyApplicationPool(t);
  const ran: string[] = [];
  const handlers = {
    orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
  };
  try {
    const inbox = makeInbox(app.adapter, { worker: WORKER, handlers: handlers as never });
    const { record } = await inbox.accept(message());
    const run = inbox.runOnce();
    await waitFor('the claim', async () => (await receiptRow(t, record.id)).status === 'PROCESSING');
    await inbox.close();
    const row = await receiptRow(t, record.id);
    expect({ status: row.status, attempts: row.attempts, lease: row.lease_expires_at }).toEqual({
      status: 'PENDING',
      attempts: 0,
      lease: null,
    });
    expect(await run).toMatchObject({ claimed: 1, completed: 0, unresolved: 1 });
    // The connection frees up after close(): the closed worker's transaction runs no handler.
    app.free();
    const next = makeInbox(t.prisma, { worker: WORKER, handlers });
    await next.runOnce();
    expect(ran).toEqual([record.id]);
    expect((await receiptRow(t, record.id)).status).toBe('COMPLETED');
  } finally {
    await app.end();
  }
});

it('processReceipt with a shutdown signal already aborted runs no handler and gives the claim back', async () => {
  const inbox = makeInbox(t.prisma, { worker: WORKER, handlers: { orders: async () => undefined } });
  const { record } = await inbox.accept(message());
  const [claim] = await claimReceipts(t.db, ['orders'], 1, WORKER.leaseMs, WORKER.maxAttempts);
  const ran: string[] = [];
  const deps = sqlProcessDeps(t, {
    worker: WORKER,
    handlers: { orders: async (_payload, context) => void ran.push(context.receiptId) },
  });
  const shutdown = new AbortController();
  shutdown.abort(new Error('closed'));
  const outcome = await processReceipt(claim!, deps, shutdown.signal, performance.now());
  const row = await receiptRow(t, record.id);
  expect({ outcome, ran, status: row.status, attempts: row.attempts, lease: row.lease_expires_at }).toEqual({
    outcome: 'unresolved',
    ran: [],
    status: 'PENDING',
    attempts: 0,
    lease: null,
  });
});
