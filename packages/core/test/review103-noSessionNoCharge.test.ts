/**
 * Review 103 (inbox worker, an outage of the application's pool): a claimed receipt whose handler
 * transaction never got a session (every connection of the application's pool busy past
 * transactionMaxWaitMs, the server refusing connections) never ran its handler.
 *
 * What happened on main: the failure was scheduled as a retry with the attempt its claim consumed:
 * at worker.maxAttempts 1 the receipt went DEAD ("attempts exhausted") although no handler ever ran,
 * so an application whose pool was exhausted for a while dead-lettered healthy messages.
 *
 * What should happen: as an outage spends no attempt elsewhere (the relay's `unavailable`, the
 * inbox's failed claims), the claim is given back with its attempt returned, due again after the
 * retry backoff (not at once: the worker would claim it again in a loop), an infrastructure-error
 * observed; once the pool frees up the handler runs and completes. A failure of the handler's own
 * statements still costs its attempt (checked beside it).
 */
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { fromPg, prismaTransactions, type InboxEvent } from '@ferry/core';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../test-support/database';
import { busyApplicationPool, makeInbox, message, receiptRow, waitFor } from './inbox/helpers';
import { renewLease } from '../src/inbox/sql/renewLease';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});
// Each case on its own receipts: one left PENDING by a case before would be claimed first.
beforeEach(async () => {
  await t.prisma.$executeRawUnsafe('TRUNCATE ferry_inbox_receipts');
});

const WORKER = {
  concurrency: 1,
  maxAttempts: 1,
  leaseMs: 5_000,
  transactionMaxWaitMs: 300,
  retryBaseMs: 400,
  retryMaxMs: 400,
};

/** The retry backoff of the first case: long enough that "due at once" cannot pass for it. */
const BACKOFF_MS = 2_000;

it('a handler transaction that never got a connection gives its claim back, attempt returned, due after a backoff', async () => {
  const app = await busyApplicationPool(t);
  const ran: string[] = [];
  const events: InboxEvent[] = [];
  try {
    const inbox = makeInbox(app.adapter, {
      // The backoff's full jitter at its ceiling: the claim is given back due exactly BACKOFF_MS
      // after the failure.
      worker: { ...WORKER, retryBaseMs: BACKOFF_MS, retryMaxMs: BACKOFF_MS },
      random: () => 1,
      handlers: {
        orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
      } as never,
      observer: (event: InboxEvent) => void events.push(event),
    });
    const { record } = await inbox.accept(message());
    // The database's clock before the run: the failure comes after it, so a claim given back after
    // the backoff is due at least BACKOFF_MS past it, however long the machine took to look (a
    // comparison with now() after the run failed at 400 ms on a loaded machine).
    const [before] = await t.prisma.$queryRawUnsafe<{ at: Date }[]>('SELECT clock_timestamp() AS at');
    const first = await inbox.runOnce();
    const row = await receiptRow(t, record.id);
    const [due] = await t.prisma.$queryRawUnsafe<{ after_start_ms: number; due_in_ms: number }[]>(
      `SELECT (extract(epoch FROM next_attempt_at - $2::timestamptz) * 1000)::float8 AS after_start_ms,
              (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms
         FROM ferry_inbox_receipts WHERE id = $1::uuid`,
      record.id,
      before!.at,
    );
    const dueInMs = Math.max(0, due?.due_in_ms ?? 0);
    expect({
      first: { claimed: first.claimed, completed: first.completed },
      ran,
      status: row.status,
      attempts: row.attempts,
      lifetime: row.lifetime_attempts,
      lease: row.lease_expires_at,
      later: (due?.after_start_ms ?? 0) >= BACKOFF_MS,
      observed: events.filter((e) => e.type === 'dead' || e.type === 'retry').map((e) => e.type),
      infrastructure: events.some((e) => e.type === 'infrastructure-error'),
    }).toEqual({
      first: { claimed: 1, completed: 0 },
      ran: [],
      status: 'PENDING',
      attempts: 0,
      lifetime: 0,
      lease: null,
      later: true,
      observed: [],
      infrastructure: true,
    });
    app.free();
    await new Promise((resolve) => setTimeout(resolve, dueInMs + 50));
    const second = await inbox.runOnce();
    expect({ completed: second.completed, ran }).toEqual({ completed: 1, ran: [record.id] });
    expect((await receiptRow(t, record.id)).status).toBe('COMPLETED');
    await inbox.close();
  } finally {
    await app.end();
  }
});

it("on Prisma: a handler transaction that waited past transactionMaxWaitMs for the pool's one connection costs no attempt", async () => {
  const prisma = prismaFor(t.url, { max: 1 });
  const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const ran: string[] = [];
  const holding = prisma.$transaction(() => held, { timeout: 30_000 });
  const seen: InboxEvent[] = [];
  try {
    const inbox = makeInbox(prismaTransactions(prisma, { db: fromPg(ferryPool) }), {
      worker: WORKER,
      observer: (event: InboxEvent) => void seen.push(event),
      handlers: {
        orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
      } as never,
    });
    const { record } = await inbox.accept(message());
    await inbox.runOnce();
    const row = await receiptRow(t, record.id);
    expect({ ran, status: row.status, attempts: row.attempts }).toEqual({
      ran: [],
      status: 'PENDING',
      attempts: 0,
    });
    await inbox.close();
  } finally {
    release();
    await holding;
    await prisma.$disconnect();
    await ferryPool.end();
  }
});

it("a failure of the handler's own statement still costs its attempt", async () => {
  const inbox = makeInbox(t.prisma, {
    // A generous wait: a loaded machine slow to lend a connection would give the claim back.
    worker: { ...WORKER, transactionMaxWaitMs: 20_000 },
    handlers: {
      orders: async (
        _payload: unknown,
        context: { tx: { $executeRawUnsafe(sql: string): Promise<number> } },
      ) => {
        await context.tx.$executeRawUnsafe('SELECT * FROM no_such_table_review103');
      },
    } as never,
  });
  const { record } = await inbox.accept(message());
  await inbox.runOnce();
  const row = await receiptRow(t, record.id);
  expect({ status: row.status, attempts: row.attempts }).toEqual({ status: 'DEAD', attempts: 1 });
  await inbox.close();
});

// Review 29 (h2): the same outage, shorter than transactionMaxWaitMs but longer than the
// handler transaction's deadline (transactionTimeoutMs; in the tests Prisma's default maxWait
// equals the worker's 5 s deadline, and a loaded machine whose pool was busy for 5 s hit it) or
// its lease (renewals answered after their deadline for leaseMs - heartbeatIntervalMs). The
// interruption came while the transaction still waited for a session: main scheduled its error
// (FERRY_TIMEOUT, InboxLeaseLostError) as a retry with the attempt the claim had consumed, so a
// receipt whose handler threw InboxPermanentError on its only run went DEAD with lifetime_attempts
// 2 (review29-defaultIsolation), and here, at worker.maxAttempts 1, a healthy one went DEAD
// "exhausted" without a run. Whether the session comes just after the interruption (the
// transaction begins, its handler is not started) or not before the worker stops waiting (one
// heartbeat interval after the deadline), no handler ran: the claim is given back.
const INTERRUPTED = {
  'deadline, session just after it': { deadline: true, freeAfterMs: 350 },
  'deadline, no session before the worker stops waiting': { deadline: true, freeAfterMs: undefined },
  'lease lost, session just after it': { deadline: false, freeAfterMs: 1_500 },
} as const;

it.each(Object.keys(INTERRUPTED) as Array<keyof typeof INTERRUPTED>)(
  'a handler transaction interrupted before it got a session gives its claim back, attempt returned (%s)',
  async (title) => {
    const { deadline, freeAfterMs } = INTERRUPTED[title];
    const app = await busyApplicationPool(t);
    const ran: string[] = [];
    const events: InboxEvent[] = [];
    // The lease case: each renewal extends the lease in the database but answers after its
    // deadline, so the lease is lost locally (1,100 ms after the claim) while the database still
    // holds it.
    const lease = { leaseMs: 2_000, heartbeatIntervalMs: 900 };
    const lateRenewals = {
      renew: async (receipt: { id: string; claimToken: string }) => {
        const owned = await renewLease(app.adapter.db, receipt.id, receipt.claimToken, lease);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return owned;
      },
    };
    try {
      const inbox = makeInbox(
        {
          ...app.adapter,
          // Armed after the worker's deadline and lease (processReceipt), so it frees the pool
          // after the interruption, and well before the worker stops waiting.
          transaction: (work, options) => {
            if (freeAfterMs !== undefined) setTimeout(app.free, freeAfterMs);
            return app.adapter.transaction(work, options);
          },
        },
        {
          worker: {
            ...WORKER,
            ...(deadline ? { transactionTimeoutMs: 300, heartbeatIntervalMs: 1_000 } : lease),
            transactionMaxWaitMs: 20_000,
            retryBaseMs: 1,
            retryMaxMs: 1,
          },
          handlers: {
            orders: async (_payload: unknown, context: { receiptId: string }) =>
              void ran.push(context.receiptId),
          } as never,
          observer: (event: InboxEvent) => void events.push(event),
        },
        deadline ? {} : { ops: lateRenewals },
      );
      const { record } = await inbox.accept(message());
      const first = await inbox.runOnce();
      const row = await receiptRow(t, record.id);
      expect({
        first: { claimed: first.claimed, unresolved: first.unresolved },
        ran,
        status: row.status,
        attempts: row.attempts,
        lifetime: row.lifetime_attempts,
        observed: events.filter((e) => e.type === 'dead' || e.type === 'retry').map((e) => e.type),
        reported: events.some(
          (e) => e.type === 'infrastructure-error' && e.operation === 'handler-transaction',
        ),
      }).toEqual({
        first: { claimed: 1, unresolved: 1 },
        ran: [],
        status: 'PENDING',
        attempts: 0,
        lifetime: 0,
        observed: [],
        reported: true,
      });
      app.free();
      await waitFor('the receipt COMPLETED', async () => {
        await inbox.runOnce();
        return (await receiptRow(t, record.id)).status === 'COMPLETED';
      });
      expect({ ran, lifetime: (await receiptRow(t, record.id)).lifetime_attempts }).toEqual({
        ran: [record.id],
        lifetime: 1,
      });
      await inbox.close();
    } finally {
      await app.end();
    }
  },
);
