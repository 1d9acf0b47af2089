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
import { busyApplicationPool, makeInbox, message, receiptRow } from './inbox/helpers';

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
