/**
 * emit / emitMany given a ROOT client (a pg Pool, a Prisma client, a Kysely instance, a root
 * SqlExecutor) open a transaction of their own: it has a deadline (`statementTimeoutMs`, as the
 * admins'), so a database that went silent (a network blackhole: no byte, no FIN, no RST, and no
 * driver timeout anywhere) fails the call with a retriable FERRY_TIMEOUT instead of holding it for
 * good. Each client first holds a connection through the proxy, then the proxy goes silent: the
 * call fails FERRY_TIMEOUT or, when its BEGIN went unanswered, FERRY_DATABASE_UNAVAILABLE; or the
 * proxy goes silent in the middle of the transaction (at its INSERT): FERRY_TIMEOUT. The test's
 * own bounded wait (HANG_MS) tells a hang from an answer: on main the calls hung (but Prisma's
 * unanswered BEGIN, which Prisma's own maxWait ended).
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createEmitter, fromPg, isFerryError, type ApplicationTransaction } from '@ferry/core';
import { outcomeWithin } from '../../../../test-support/deadlines';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';
import { halfOpenProxy, type HalfOpenProxy } from '../../../../test-support/halfOpenProxy';

/** The emitter's deadline under test. */
const STATEMENT_TIMEOUT_MS = 300;
/** Far above the deadline (and its grace): a call still waiting then hangs. */
const HANG_MS = 8_000;

let t: TestDatabase;
let proxy: HalfOpenProxy;
const ends: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  proxy = await halfOpenProxy(new URL(t.url));
});
afterEach(async () => {
  proxy.close(); // ends the silent sockets, so the clients can be ended
  for (const end of ends.splice(0)) await end().catch(() => undefined);
  await t.db.execute(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
});
afterAll(async () => {
  await t.drop();
});

/**
 * What a silent database answers, typed and retriable: FERRY_TIMEOUT, or FERRY_DATABASE_UNAVAILABLE
 * when the transaction did not start in time (node-postgres' BEGIN went unanswered), as the admins.
 */
function expectSilenceError(error: unknown): void {
  const typed = isFerryError(error, 'FERRY_TIMEOUT') || isFerryError(error, 'FERRY_DATABASE_UNAVAILABLE');
  if (!typed) throw new Error(`expected FERRY_TIMEOUT / FERRY_DATABASE_UNAVAILABLE, got ${String(error)}`);
  expect(error).toMatchObject({ retriable: true });
}

function pgPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 2 });
  pool.on('error', () => undefined); // the proxy's doing
  // A connection Kysely still holds when the proxy closes reports its end to the client itself.
  pool.on('connect', (client) => void client.on('error', () => undefined));
  ends.push(() => pool.end());
  return pool;
}

const clients: Record<string, () => ApplicationTransaction> = {
  'a pg Pool': () => pgPool(),
  'fromPg(pool), a root SqlExecutor': () => fromPg(pgPool()),
  'a Prisma client': () => {
    const prisma = prismaFor(proxy.url(t.url), { max: 2 });
    ends.push(() => prisma.$disconnect());
    return prisma;
  },
  'a Kysely instance': () => {
    const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: pgPool() }) });
    ends.push(() => kysely.destroy());
    return kysely;
  },
};

describe.each(Object.keys(clients))('emit on %s when PostgreSQL goes silent', (name) => {
  it('emitMany fails typed and retriable within its deadline, not a hang', async () => {
    const client = clients[name]!();
    const emitter = createEmitter({ statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    // The client holds a connection through the proxy (the deadline lets an answer through).
    await emitter.emit(client, { type: 'silent.before', payload: {} });
    proxy.silence();
    const outcome = await outcomeWithin(
      emitter.emitMany(client, [
        { type: 'silent.emit', payload: { i: 1 } },
        { type: 'silent.emit', payload: { i: 2 } },
      ]),
      HANG_MS,
    );
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error: unknown };
    expectSilenceError(error);
    // The transaction never reached its COMMIT: nothing of it was written.
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'silent.emit'`,
    );
    expect(row?.n).toBe(0);
  });
});

describe.each(Object.keys(clients))('emit on %s when PostgreSQL goes silent mid-transaction', (name) => {
  it('emitMany fails with a retriable FERRY_TIMEOUT once its transaction cannot have finished', async () => {
    const client = clients[name]!();
    const emitter = createEmitter({ statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    // Connected, BEGIN and the transaction's limits answered: the INSERT is the first thing lost.
    proxy.silenceOn('INSERT INTO outbox_events');
    const outcome = await outcomeWithin(
      emitter.emitMany(client, [{ type: 'silent.mid', payload: {} }]),
      HANG_MS,
    );
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error: unknown };
    expect(isFerryError(error, 'FERRY_TIMEOUT')).toBe(true);
    expect(error).toMatchObject({ retriable: true });
    const [row] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'silent.mid'`,
    );
    expect(row?.n).toBe(0);
  });
});
