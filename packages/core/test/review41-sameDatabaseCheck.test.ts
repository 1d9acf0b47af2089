/**
 * Review 41: the same-database check that 16e9718 added to `Inbox.initialize()`
 * (src/inbox/adapterChecks.ts, checkSameDatabase), on the configuration the docs recommend,
 * `prismaTransactions(prisma, { db: fromPg(pool) })` (docs/inbox.md: Prisma for the handler,
 * node-postgres for ferry's own statements).
 *
 * 1. A false refusal. The check compares `pg_postmaster_start_time()::text` read on each side, and
 *    a timestamptz's text is rendered in the SESSION's TimeZone (and DateStyle). The pool and the
 *    Prisma client are built from two settings, so their sessions need not share a time zone: a
 *    pool given `options: '-c TimeZone=UTC'` (or an `ALTER ROLE ... SET timezone` on a role only
 *    one side uses, or a PGTZ in one environment). The same server then reads
 *    `2026-12-04 08:06:59.51+00` on one side and `2026-12-04 22:06:59.51+14` on the other, and
 *    `initialize()` refuses an application that reaches ONE database with FerryConfigError
 *    "`db`... must be the same database". Before 16e9718 it started (and worked); after, the
 *    service does not boot (nestjs onApplicationBootstrap throws).
 *    Fix direction: compare an instant, not its text: `extract(epoch FROM pg_postmaster_start_time())`
 *    (as text of a numeric), or `to_char(... AT TIME ZONE 'UTC', ...)`, or system_identifier.
 *
 * 2. A hang. The check's handler transaction (adapter.transaction) has no deadline of ferry's on
 *    Prisma: Prisma's own `timeout` rolls back on the same connection, behind the unanswered
 *    statement, and the callback's statement is never given up, so when the Prisma side goes silent
 *    (a network blackhole, a half-open connection to a PgBouncer) after its BEGIN, `initialize()`
 *    never settles: no error, no log, the service never starts. The worker guards this very case
 *    (process.ts gives up one heartbeat past transactionTimeoutMs; hungHandler.test.ts) and emit
 *    does (withDeadlines; outbox/silentEmit.test.ts), the new check does not. Before 16e9718,
 *    initialize() ran only statements on `db`, each with its deadline.
 *    Fix direction: race the check's transaction against transactionTimeoutMs plus a grace (as
 *    process.ts does) and fail with a retriable FERRY_TIMEOUT naming the handler transaction.
 */
import { Pool } from 'pg';
import { FerryError, fromPg, isFerryError, prismaTransactions } from '@ferry/core';
import { outcomeWithin } from '../../../test-support/deadlines';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../test-support/database';
import { halfOpenProxy, type HalfOpenProxy } from '../../../test-support/halfOpenProxy';
import { makeInbox } from './inbox/helpers';

let t: TestDatabase;
const ends: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  for (const end of ends.splice(0)) await end().catch(() => undefined);
});
afterAll(async () => {
  await t.db.execute(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  await t.drop();
});

function pool(options: { options?: string; connectionString?: string } = {}): Pool {
  const created = new Pool({ connectionString: t.url, max: 3, ...options });
  created.on('error', () => undefined);
  ends.push(() => created.end());
  return created;
}

describe('review41: initialize() on prismaTransactions(prisma, { db: fromPg(pool) }), one database', () => {
  it('starts when the pool’s sessions run in another time zone than the Prisma client’s', async () => {
    // The same database, the same server: only the sessions' TimeZone differs.
    const prisma = prismaFor(t.url, { max: 2, options: '-c TimeZone=Pacific/Kiritimati' });
    ends.push(() => prisma.$disconnect());
    const ferryPool = pool({ options: '-c TimeZone=UTC' });
    const inbox = makeInbox(prismaTransactions(prisma, { db: fromPg(ferryPool) }), {
      worker: { enabled: false },
      handlers: { orders: async () => undefined },
    });
    const outcome = await inbox.initialize().then(
      () => 'started',
      (error: unknown) => ({
        refused: error instanceof FerryError ? `${error.code}: ${error.message}` : String(error),
      }),
    );
    expect(outcome).toBe('started');
  });
});

describe('review41: initialize() when the Prisma side goes silent during the check’s transaction', () => {
  let proxy: HalfOpenProxy;
  beforeEach(async () => {
    proxy = await halfOpenProxy(new URL(t.url));
    ends.push(async () => proxy.close());
  });

  it('fails typed within its deadline instead of hanging (transactionTimeoutMs 1 s)', async () => {
    // ferry's own statements on a direct pool (schema check and the first half of the check answer);
    // Prisma through the proxy, silent from the check's statement on (after its BEGIN was answered).
    const prisma = prismaFor(proxy.url(t.url), { max: 2 });
    ends.push(() => prisma.$disconnect());
    const inbox = makeInbox(prismaTransactions(prisma, { db: fromPg(pool()) }), {
      worker: { enabled: false, transactionTimeoutMs: 1_000 },
      handlers: { orders: async () => undefined },
    });
    proxy.silenceOn('pg_postmaster_start_time');
    // 15 s: fifteen times the transaction's timeout, far past any deadline ferry sets.
    const outcome = await outcomeWithin(inbox.initialize(), 15_000);
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error?: unknown };
    expect(isFerryError(error)).toBe(true);
  }, 30_000);
});
