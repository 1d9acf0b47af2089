/**
 * emit on a root client whose own transaction's COMMIT answer is lost (lostCommitAnswer.test.ts
 * for the admins). Once the COMMIT was sent the outcome is PostgreSQL's: the events may be in the
 * table, and a retriable failure would make the caller emit them again (duplicates). So emit asks
 * PostgreSQL (txid_status): committed → the ids, as if the answer had come; rolled back → the
 * failure, retriable; no answer → FERRY_OUTCOME_UNKNOWN (not retriable). On main each call hung
 * (no deadline on emit's own transaction): the test's bounded wait (HANG_MS) tells so.
 */
import pg from 'pg';
import { createEmitter, fromPrisma, isFerryError, type ApplicationTransaction } from '@ferry/core';
import {
  commitSwallowingProxy,
  type CommitSwallowingProxy,
} from '../../../../test-support/commitSwallowingProxy';
import { outcomeWithin } from '../../../../test-support/deadlines';
import { createTestDatabase, prismaFor, type TestDatabase } from '../../../../test-support/database';

const STATEMENT_TIMEOUT_MS = 500;
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

const clients: Record<string, () => ApplicationTransaction> = {
  'a pg Pool': () => {
    const pool = new pg.Pool({ connectionString: proxy.url(t.url), max: 4 });
    pool.on('error', () => undefined); // the proxy's doing
    ends.push(() => pool.end());
    return pool;
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
    const client = clients[name]!();
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
