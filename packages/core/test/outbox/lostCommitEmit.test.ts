/**
 * emit on a root client whose own transaction's COMMIT answer is lost (lostCommitAnswer.test.ts
 * for the admins). Once the COMMIT was sent the outcome is PostgreSQL's: the events may be in the
 * table, and a retriable failure would make the caller emit them again (duplicates). So emit asks
 * PostgreSQL (txid_status): committed → the ids, as if the answer had come; rolled back → the
 * failure, retriable; no answer → FERRY_OUTCOME_UNKNOWN (not retriable). On main each call hung
 * (no deadline on emit's own transaction): the test's bounded wait (HANG_MS) tells so. On a single
 * pg Client the question was asked on the client itself, stuck behind the lost COMMIT: always
 * FERRY_OUTCOME_UNKNOWN, even when the COMMIT landed (now: on a connection of its own).
 */
import pg from 'pg';
import { createEmitter, fromPrisma, isFerryError, type ApplicationTransaction } from '@ferry/core';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../../test-support/commitSwallowingProxy';
import { outcomeWithin } from '../../../../test-support/deadlines';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';

// The emitter's deadline, which also bounds its wait for a connection: at 500 ms a connection
// through the proxy to a new backend took longer on a loaded machine (load 8: "no connection for
// a transaction within 500 ms" instead of the outcome under test).
const STATEMENT_TIMEOUT_MS = 1_500;
/** Far above the deadline, its grace and the outcome lookup: a call still waiting then hangs. */
const HANG_MS = 10_000;

let t: TestDatabase;
let proxy: CommitSwallowingProxy;
const ends: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
beforeEach(async () => {
  proxy = await commitSwallowingProxy();
});
afterEach(async () => {
  proxy.close();
  for (const end of ends.splice(0)) await end().catch(() => undefined);
});
afterAll(async () => {
  await t.drop();
});

const clients: Record<string, () => ApplicationTransaction | Promise<ApplicationTransaction>> = {
  'a pg Pool': () => {
    const pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 4 });
    pool.on('error', () => undefined); // the proxy's doing
    ends.push(() => pool.end());
    return pool;
  },
  // One connection: the one that lost the answer is stuck behind its COMMIT, so PostgreSQL is
  // asked on a connection of its own with the client's parameters (on main: on the stuck one,
  // which never answered, so FERRY_OUTCOME_UNKNOWN even when the COMMIT landed).
  'a pg Client': async () => {
    const client = new pg.Client({ connectionString: proxy.url(t.url) });
    client.on('error', () => undefined); // the proxy's doing
    await client.connect();
    ends.push(() => client.end());
    return client;
  },
  'a Prisma client': () => {
    const prisma = prismaFor(proxy.url(t.url));
    ends.push(() => prisma.$disconnect());
    return fromPrisma(prisma);
  },
};

/** Rows of the run `run` in the table, seen on a connection of its own. */
async function rowsOf(run: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'run' = $1`,
    [run],
  );
  return row?.n ?? -1;
}

const events = (run: string) => [
  { type: 'lost-commit.emit', payload: { run, i: 1 } },
  { type: 'lost-commit.emit', payload: { run, i: 2 } },
];

describe.each(Object.keys(clients))('emit on %s, its COMMIT answer lost', (name) => {
  const setUp = async () => {
    const client = await clients[name]!();
    const emitter = createEmitter({ statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    await emitter.emit(client, { type: 'lost-commit.warm', payload: {} }); // connected
    return { client, emitter };
  };

  it('returns the ids when PostgreSQL says it committed', async () => {
    const { client, emitter } = await setUp();
    const run = `answered-${name}`;
    proxy.arm();
    const outcome = await outcomeWithin(emitter.emitMany(client, events(run)), HANG_MS);
    expect(proxy.swallowed()).toBe(true);
    expect(outcome).not.toBe('hung');
    expect(outcome).toMatchObject({ value: { ids: [expect.any(String), expect.any(String)] } });
    expect(await rowsOf(run)).toBe(2);
  });

  it('fails FERRY_OUTCOME_UNKNOWN, not retriable, when PostgreSQL cannot be asked', async () => {
    const { client, emitter } = await setUp();
    const run = `partitioned-${name}`;
    proxy.arm({ everything: true });
    const outcome = await outcomeWithin(emitter.emitMany(client, events(run)), HANG_MS);
    expect(proxy.swallowed()).toBe(true);
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error: unknown };
    expect(isFerryError(error, 'FERRY_OUTCOME_UNKNOWN')).toBe(true);
    expect(error).toMatchObject({ retriable: false, details: { outcome: 'unknown' } });
    const { ids } = (error as { details: { ids: string[] } }).details;
    expect(ids).toHaveLength(2);
    proxy.heal();
    // It was committed: a retry on a retriable error would have written them twice. The error
    // names the events, to look for before emitting again.
    expect(await rowsOf(run)).toBe(2);
    const found = await t.db.query<{ id: string }>(
      `SELECT id::text AS id FROM outbox_events WHERE id = ANY($1::uuid[]) ORDER BY id`,
      [ids],
    );
    expect(found.map((row) => row.id)).toEqual([...ids].sort());
  });

  it('fails retriable, nothing written, when the COMMIT never reached PostgreSQL', async () => {
    const { client, emitter } = await setUp();
    const run = `dropped-${name}`;
    proxy.arm({ dropCommit: true });
    const outcome = await outcomeWithin(emitter.emitMany(client, events(run)), HANG_MS);
    expect(proxy.swallowed()).toBe(true);
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error: unknown };
    // PostgreSQL ended the idle session (idle_in_transaction_session_timeout) and rolled it back;
    // asked afterwards, it says aborted: the failure as it came, retriable.
    expect(isFerryError(error)).toBe(true);
    expect(error).toMatchObject({ retriable: true });
    expect(await rowsOf(run)).toBe(0);
  });
});

it('on a pg Client, the connection of its own the outcome was asked on is ended afterwards', async () => {
  const name = 'ferry-lost-commit-client';
  const client = new pg.Client({ connectionString: proxy.url(t.url), application_name: name });
  client.on('error', () => undefined); // the proxy's doing
  await client.connect();
  ends.push(() => client.end());
  const emitter = createEmitter({ statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  await emitter.emit(client, { type: 'lost-commit.warm', payload: {} });
  proxy.arm();
  const outcome = await outcomeWithin(emitter.emitMany(client, events('side-connection')), HANG_MS);
  expect(outcome).toMatchObject({ value: { ids: [expect.any(String), expect.any(String)] } });
  // The lookup's connection carries the client's parameters (its application_name): once ended,
  // only the client's own backend (stuck behind its lost answer) is left.
  const backends = async () => {
    const [row] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [name],
    );
    return row?.n ?? -1;
  };
  // Well under pg's idleTimeoutMillis (10 s), past which a pool left open would end it by itself.
  const until = Date.now() + 5_000;
  while ((await backends()) !== 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(await backends()).toBe(1);
});
