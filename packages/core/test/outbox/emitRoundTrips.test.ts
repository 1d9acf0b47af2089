/**
 * emit on a root node-postgres Pool or Kysely instance: the statements its own transaction sends.
 * The executor sets the transaction's limits with its first statement (fromPg: in the BEGIN
 * string; Kysely: the statement after BEGIN), and withDeadlines then set them again in the
 * statement that reads the transaction's id: two set_config of statement_timeout, one round trip
 * more than needed. Now the executor reads the id with its own first statement when withDeadlines
 * asks for it. The pool's connections record what they are sent (real PostgreSQL).
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createEmitter, type ApplicationTransaction } from '@ferry/core';
import { commitSwallowingProxy } from '../../../../test-support/commitSwallowingProxy';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';

let t: TestDatabase;
const ends: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
});
afterEach(async () => {
  for (const end of ends.splice(0)) await end().catch(() => undefined);
});
afterAll(async () => {
  await t.drop();
});

/** A pool whose connections push the text of every statement they are sent to `sent`. */
function recordingPool(sent: string[], url = t.url): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [first] = args;
      sent.push(typeof first === 'string' ? first : String((first as { text?: unknown }).text));
      return query(...args);
    };
  });
  ends.push(() => pool.end());
  return pool;
}

const clients: Record<string, { make: (sent: string[]) => ApplicationTransaction; statements: number }> = {
  // BEGIN with the limits and the id; the insert; COMMIT.
  'a pg Pool': { make: (sent) => recordingPool(sent), statements: 3 },
  // BEGIN; the limits, the backend and the id; the insert; COMMIT.
  'a Kysely instance': {
    make: (sent) => {
      const kysely = new Kysely<Record<string, never>>({
        dialect: new PostgresDialect({ pool: recordingPool(sent) }),
      });
      ends.push(() => kysely.destroy());
      return kysely;
    },
    statements: 4,
  },
};

const limits = (sent: readonly string[]) => sent.filter((text) => text.includes("'statement_timeout'"));

describe.each(Object.keys(clients))('emit on %s', (name) => {
  it('sets the transaction limits once, and reads the id in the same round trip', async () => {
    const sent: string[] = [];
    const client = clients[name]!.make(sent);
    const emitter = createEmitter({ statementTimeoutMs: 5_000 });
    await emitter.emit(client, { type: 'round-trips.warm', payload: {} }); // connected
    sent.length = 0;
    const { id } = await emitter.emit(client, { type: 'round-trips.emit', payload: {} });
    const [row] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox_events WHERE id = $1',
      [id],
    );
    expect(row?.n).toBe(1);
    expect(limits(sent)).toHaveLength(1);
    expect(sent.filter((text) => text.includes('txid_current()'))).toHaveLength(1);
    expect(sent).toHaveLength(clients[name]!.statements);
  });
});

it('on a pg Pool whose COMMIT answer is lost, the id read with the BEGIN still finds the outcome', async () => {
  const proxy = await commitSwallowingProxy();
  ends.push(async () => proxy.close());
  const sent: string[] = [];
  const pool = recordingPool(sent, proxy.url(t.url));
  pool.on('error', () => undefined); // the proxy's doing
  const emitter = createEmitter({ statementTimeoutMs: 500 });
  await emitter.emit(pool, { type: 'round-trips.warm', payload: {} });
  proxy.arm();
  const { id } = await emitter.emit(pool, { type: 'round-trips.lost', payload: {} });
  expect(proxy.swallowed()).toBe(true);
  const [row] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox_events WHERE id = $1',
    [id],
  );
  expect(row?.n).toBe(1);
});
