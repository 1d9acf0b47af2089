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
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import {
  fromPg,
  pgTransactions,
  prismaTransactions,
  type InboxEvent,
  type TransactionAdapter,
} from '@ferry/core';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../test-support/database';
import { busyApplicationPool, makeInbox, message, receiptRow, waitFor } from './inbox/helpers';
import { renewLease } from '../src/inbox/sql/renewLease';
import type { SqlExecutor } from '../src/sql/executor';

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

/** The receipt after the worker's first run: claimed, and what became of it. */
async function firstRun(
  inbox: { runOnce(): Promise<{ claimed: number; unresolved: number }> },
  id: string,
  ran: readonly string[],
  events: readonly InboxEvent[],
) {
  const first = await inbox.runOnce();
  const row = await receiptRow(t, id);
  return {
    first: { claimed: first.claimed, unresolved: first.unresolved },
    ran: [...ran],
    status: row.status,
    attempts: row.attempts,
    lifetime: row.lifetime_attempts,
    observed: events.filter((e) => e.type === 'dead' || e.type === 'retry').map((e) => e.type),
  };
}

/** Runs the worker until the receipt is COMPLETED (within waitFor's deadline). */
async function runUntilCompleted(inbox: { runOnce(): Promise<unknown> }, id: string): Promise<void> {
  await waitFor('the receipt COMPLETED', async () => {
    await inbox.runOnce();
    return (await receiptRow(t, id)).status === 'COMPLETED';
  });
}

/** firstRun of a claim given back, its attempt returned, no handler run. */
const GIVEN_BACK = {
  first: { claimed: 1, unresolved: 1 },
  ran: [],
  status: 'PENDING',
  attempts: 0,
  lifetime: 0,
  observed: [],
};

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
      expect({
        ...(await firstRun(inbox, record.id, ran, events)),
        reported: events.some(
          (e) => e.type === 'infrastructure-error' && e.operation === 'handler-transaction',
        ),
      }).toEqual({ ...GIVEN_BACK, reported: true });
      app.free();
      await runUntilCompleted(inbox, record.id);
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

/** The deadline of review 149's cases, and how late their sessions or first statements come. */
const TIMEOUT_MS = 300;
/** Past the deadline, well before the worker stops waiting (a heartbeat interval after it). */
const LATE_MS = TIMEOUT_MS + 400;

/** An inbox on `adapter` whose handler transactions have TIMEOUT_MS, recording its handler's runs. */
function deadlineInbox<TTx>(adapter: TransactionAdapter<TTx>, ran: string[], events: InboxEvent[] = []) {
  return makeInbox(adapter, {
    worker: {
      ...WORKER,
      transactionTimeoutMs: TIMEOUT_MS,
      heartbeatIntervalMs: 1_500,
      transactionMaxWaitMs: 20_000,
      retryBaseMs: 1,
      retryMaxMs: 1,
    },
    handlers: {
      orders: async (_payload: unknown, context: { receiptId: string }) => void ran.push(context.receiptId),
    } as never,
    observer: (event: InboxEvent) => void events.push(event),
  });
}

/** `tx` bound by `adapter`, its first statement (beginHandler's) answered past the deadline. */
function slowFirstStatement<TTx>(adapter: TransactionAdapter<TTx>, tx: TTx): SqlExecutor {
  const bound = adapter.bind(tx);
  return {
    ...bound,
    query: async <T>(text: string, values?: readonly unknown[]): Promise<T[]> => {
      // The server busy with it (a session left idle would be ended by the adapter's
      // idle_in_transaction_session_timeout, a session gone).
      if (text.includes("set_config('lock_timeout'")) {
        await bound.query('SELECT pg_sleep($1::float8)::text AS slept', [LATE_MS / 1000]);
      }
      return bound.query<T>(text, values);
    },
  };
}

// Review 149: the same interruption once the transaction had a session but before its handler
// started. Main gave the claim back only when the interruption came before a session was lent
// (onSession), and charged it otherwise: a FERRY_TIMEOUT retry, at worker.maxAttempts 1 DEAD
// "exhausted" with no handler run, when the deadline passed
// - while the transaction's first statement (ferry's, beginHandler) was in flight: the session
//   lent just before the deadline, as on a pool busy for about transactionTimeoutMs;
// - while the READ COMMITTED rerun of a database whose default is SERIALIZABLE waited for its
//   second session (the first run's flag stayed set).
// Neither ran a handler: the claim goes back, its attempt returned.
const BEFORE_THE_HANDLER = {
  "the transaction's first statement in flight": { serializable: false },
  'the READ COMMITTED rerun waiting for its session': { serializable: true },
} as const;

it.each(Object.keys(BEFORE_THE_HANDLER) as Array<keyof typeof BEFORE_THE_HANDLER>)(
  'a handler transaction whose deadline passed after it got a session, before its handler started, gives its claim back (%s)',
  async (title) => {
    const { serializable } = BEFORE_THE_HANDLER[title];
    const appPool = listened(
      new Pool({
        connectionString: t.url,
        max: 1,
        ...(serializable ? { options: '-c default_transaction_isolation=serializable' } : {}),
      }),
    );
    const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    const real = pgTransactions(appPool);
    let late = true;
    let runs = 0;
    const ran: string[] = [];
    const events: InboxEvent[] = [];
    try {
      const adapter: TransactionAdapter<PoolClient> = {
        db: fromPg(ferryPool),
        // The rerun's session is lent late: the pool's one connection held past the deadline.
        transaction: async (work, options) => {
          runs += 1;
          if (late && runs === 2) {
            const held = await appPool.connect();
            setTimeout(() => held.release(), LATE_MS);
          }
          return real.transaction(work, options);
        },
        bind: (tx) => (late && !serializable ? slowFirstStatement(real, tx) : real.bind(tx)),
      };
      const inbox = deadlineInbox(adapter, ran, events);
      const { record } = await inbox.accept(message());
      expect({ ...(await firstRun(inbox, record.id, ran, events)), runs }).toEqual({
        ...GIVEN_BACK,
        runs: serializable ? 2 : 1,
      });
      late = false;
      await runUntilCompleted(inbox, record.id);
      expect(ran).toEqual([record.id]);
      await inbox.close();
    } finally {
      await appPool.end();
      await ferryPool.end();
    }
  },
);

// Review 149: a pool that lends every session only after the handler transaction's deadline (each
// claim given back). Main ended the worker's outage whenever such a late session came (the
// transaction began, though it started no handler): the outage began again with each claim, so
// inbox.sessionOutage counted one transaction at most, its age never reached maxCycleAgeMs
// (createHealth stayed up) and the give-back's outage delay never grew. A session lent after the
// interruption ends no outage.
it('a pool that lends sessions only after the deadline keeps the outage going', async () => {
  const app = await busyApplicationPool(t);
  const real = app.adapter;
  const ran: string[] = [];
  try {
    const inbox = deadlineInbox(
      {
        ...real,
        // Each transaction gets its session LATE_MS after it asked.
        transaction: async (work, options) => {
          await new Promise((resolve) => setTimeout(resolve, LATE_MS));
          return real.transaction(work, options);
        },
      },
      ran,
    );
    app.free();
    const { record } = await inbox.accept(message());
    await inbox.runOnce();
    await waitFor('claimed again', async () => (await inbox.runOnce()).claimed === 1);
    const row = await receiptRow(t, record.id);
    expect({
      ran,
      status: row.status,
      attempts: row.attempts,
      transactions: inbox.sessionOutage?.transactions,
    }).toEqual({ ran: [], status: 'PENDING', attempts: 0, transactions: 2 });
    await inbox.close();
  } finally {
    await app.end();
  }
});

it("on Prisma: a handler transaction whose deadline passed while its first statement was in flight gives its claim back (Prisma's expired-transaction P2028, not the worker's deadline)", async () => {
  const prisma = prismaFor(t.url, { max: 1 });
  const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
  const real = prismaTransactions(prisma, { db: fromPg(ferryPool) });
  let late = true;
  const ran: string[] = [];
  const events: InboxEvent[] = [];
  try {
    const inbox = deadlineInbox(
      { ...real, bind: (tx) => (late ? slowFirstStatement(real, tx) : real.bind(tx)) },
      ran,
      events,
    );
    const { record } = await inbox.accept(message());
    expect(await firstRun(inbox, record.id, ran, events)).toEqual(GIVEN_BACK);
    late = false;
    await runUntilCompleted(inbox, record.id);
    expect(ran).toEqual([record.id]);
    await inbox.close();
  } finally {
    await prisma.$disconnect();
    await ferryPool.end();
  }
});
