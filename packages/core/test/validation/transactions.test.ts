/**
 * TransactionOptions on the adapters that have none of their own (node-postgres, Kysely):
 * maxWaitMs gives up on a pool with no free connection (and a transaction that starts late
 * never runs its work), timeoutMs becomes transaction-local PostgreSQL timeouts, and a COMMIT
 * that PostgreSQL answers with ROLLBACK is not reported as success; a signal aborted before the
 * start runs nothing.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg, pgTransactions, type SqlExecutor, type TransactionAdapter } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { waitFor } from '../inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

interface Subject {
  /** The adapter on a pool of exactly one connection, that pool, and how to close them. */
  adapter: TransactionAdapter<unknown>;
  pool: Pool;
  close(): Promise<void>;
}

const subjects: Record<string, () => Subject> = {
  'node-postgres': () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    return { adapter: pgTransactions(pool) as TransactionAdapter<unknown>, pool, close: () => pool.end() };
  },
  Kysely: () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 1 }));
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    return {
      adapter: kyselyTransactions(db) as TransactionAdapter<unknown>,
      pool,
      close: () => db.destroy(),
    };
  },
};

async function settings(db: SqlExecutor): Promise<{ statement: string; idle: string }> {
  const [row] = await db.query<{ statement: string; idle: string }>(
    `SELECT current_setting('statement_timeout') AS statement,
            current_setting('idle_in_transaction_session_timeout') AS idle`,
  );
  return row!;
}

describe.each(Object.keys(subjects))('transactions on %s', (name) => {
  let subject: Subject;
  beforeEach(() => {
    subject = subjects[name]!();
  });
  afterEach(() => subject.close());

  it('gives up after maxWaitMs while the pool has no free connection, and never runs the late work', async () => {
    const held: PoolClient = await subject.pool.connect();
    let ran = false;
    const attempt = subject.adapter.transaction(
      async () => {
        ran = true;
      },
      { maxWaitMs: 50 },
    );
    await expect(attempt).rejects.toMatchObject({ code: 'FERRY_DATABASE_UNAVAILABLE', retriable: true });
    held.release();
    // The abandoned transaction gets the connection now, rolls back at once and gives it back.
    await waitFor('the late transaction to hand the connection back', async () =>
      subject.pool.waitingCount === 0 && subject.pool.idleCount === 1 ? true : undefined,
    );
    expect(ran).toBe(false);
    expect(await subject.adapter.db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });

  it('applies timeoutMs as transaction-local statement and idle timeouts', async () => {
    const before = await settings(subject.adapter.db);
    const inside = await subject.adapter.transaction((tx) => settings(subject.adapter.bind(tx)), {
      timeoutMs: 1234,
    });
    expect(inside).toEqual({ statement: '1234ms', idle: '1234ms' });
    // The pool's one connection is back to its session settings.
    expect(await settings(subject.adapter.db)).toEqual(before);
  });

  it('asks PostgreSQL to notice a closed connection within a second, even during a statement', async () => {
    const read = (tx: unknown) =>
      subject.adapter
        .bind(tx)
        .query<{ interval: string }>(
          `SELECT current_setting('client_connection_check_interval') AS interval`,
        );
    expect(await subject.adapter.transaction(read, { timeoutMs: 1234 })).toEqual([{ interval: '1s' }]);
    expect(
      await subject.adapter.db.query(
        `SELECT current_setting('client_connection_check_interval') AS interval`,
      ),
    ).toEqual([{ interval: '0' }]);
  });

  it('runs nothing, and takes no connection, when its signal was aborted before the start', async () => {
    const controller = new AbortController();
    const reason = new Error('given up before the start');
    controller.abort(reason);
    let ran = false;
    const attempt = subject.adapter.transaction(
      async () => {
        ran = true;
      },
      { signal: controller.signal, timeoutMs: 5_000 },
    );
    await expect(attempt).rejects.toBe(reason);
    // The pool is new (beforeEach): it never opened a connection.
    expect(subject.pool.totalCount).toBe(0);
    expect(ran).toBe(false);
  });

  it('takes the largest timeoutMs PostgreSQL holds as a deadline that far away', async () => {
    // 2^31 - 1 ms (about 24.8 days) is statement_timeout's maximum; the whole-transaction
    // deadline must not overflow Node's timer (which then fires at once).
    const inside = await subject.adapter.transaction((tx) => settings(subject.adapter.bind(tx)), {
      timeoutMs: 2_147_483_647,
    });
    expect(inside).toEqual({ statement: '2147483647ms', idle: '2147483647ms' });
  });

  it('takes timeoutMs 0 as PostgreSQL does: no limit, no deadline', async () => {
    const inside = await subject.adapter.transaction((tx) => settings(subject.adapter.bind(tx)), {
      timeoutMs: 0,
    });
    expect(inside).toEqual({ statement: '0', idle: '0' });
  });

  it.each([-1, 1.5, 2_147_483_648])('refuses timeoutMs %p before running the work', async (timeoutMs) => {
    let ran = false;
    await expect(
      subject.adapter.transaction(
        async () => {
          ran = true;
        },
        { timeoutMs },
      ),
    ).rejects.toMatchObject({ code: 'FERRY_CONFIG_INVALID' });
    expect(ran).toBe(false);
  });

  it('rolls back and rethrows when the work fails', async () => {
    await subject.adapter.db.execute('CREATE TABLE IF NOT EXISTS tx_probe (name text)');
    await expect(
      subject.adapter.transaction(async (tx) => {
        await subject.adapter.bind(tx).execute('INSERT INTO tx_probe VALUES ($1)', [name]);
        throw new Error('work failed');
      }),
    ).rejects.toThrow('work failed');
    expect(await subject.adapter.db.query('SELECT name FROM tx_probe WHERE name = $1', [name])).toEqual([]);
  });
});

describe('pgTransactions on a connection whose prepared statements were dropped', () => {
  let pool: Pool;
  beforeEach(() => {
    pool = listened(new Pool({ connectionString: t.url, max: 1 }));
  });
  afterEach(() => pool.end());

  it.each(['DISCARD ALL', 'DEALLOCATE ALL'])(
    'replaces the connection after %s behind the driver: one transaction fails, the next one runs',
    async (reset) => {
      const adapter = pgTransactions(pool);
      const prepared = () =>
        adapter.transaction((client) => adapter.bind(client).query('SELECT $1::int AS seven', [7]));
      expect(await prepared()).toEqual([{ seven: 7 }]);
      const application = await pool.connect();
      await application.query(reset);
      application.release();
      await expect(prepared()).rejects.toMatchObject({ code: '26000' });
      expect(await prepared()).toEqual([{ seven: 7 }]);
    },
  );
});

describe('fromPg transactions', () => {
  let pool: Pool;
  beforeEach(() => {
    pool = listened(new Pool({ connectionString: t.url, max: 1 }));
  });
  afterEach(() => pool.end());

  it('reports a COMMIT that PostgreSQL answered with ROLLBACK (a failed statement was swallowed) as a failure', async () => {
    const db = fromPg(pool);
    await db.execute('CREATE TABLE IF NOT EXISTS swallowed (n int)');
    const outcome = db.transaction(async (tx) => {
      await tx.execute('INSERT INTO swallowed VALUES ($1)', [1]);
      await tx.query('SELECT 1 / 0').catch(() => undefined);
    });
    await expect(outcome).rejects.toMatchObject({ code: 'FERRY_DATABASE_ERROR' });
    expect(await db.query('SELECT n FROM swallowed')).toEqual([]);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

describe('kyselyTransactions given up during a statement, on a pool with no free connection', () => {
  it('commits nothing of it, and cancels no statement of a later transaction on that backend when its cancel is sent late', async () => {
    const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    const adapter = kyselyTransactions(db);
    const sleep = (tx: Transaction<Record<string, never>>, seconds: number) =>
      sql.raw(`SELECT pg_sleep(${seconds})`).execute(tx);
    const sleeping = (seconds: number) =>
      waitFor(`pg_sleep(${seconds}) to run`, async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1
             AND datname = current_database()`,
          [`%pg_sleep(${seconds}%`],
        );
        return row!.n > 0;
      });
    const held = await pool.connect();
    let released = false;
    try {
      const controller = new AbortController();
      await t.db.execute('CREATE TABLE IF NOT EXISTS tx_probe (name text)');
      const first = adapter.transaction(
        async (tx) => {
          await sql`INSERT INTO tx_probe VALUES ('given up')`.execute(tx);
          await sleep(tx, 2);
        },
        { signal: controller.signal },
      );
      first.catch(() => undefined);
      await sleeping(2);
      // Queued for a connection before the cancel: it gets the first one's connection after its rollback.
      const later = adapter.transaction(async (tx) => {
        await sleep(tx, 3);
        return 'slept';
      });
      await waitFor('the later transaction to wait for a connection', async () => pool.waitingCount === 1);
      const reason = new Error('given up');
      controller.abort(reason);
      // Its work ended after it was given up: nothing of it commits.
      await expect(first).rejects.toBe(reason);
      expect(await t.db.query(`SELECT name FROM tx_probe WHERE name = 'given up'`)).toEqual([]);
      await sleeping(3);
      // The first transaction's cancel gets a connection only now, while the later one sleeps on that backend.
      held.release();
      released = true;
      await expect(later).resolves.toBe('slept');
    } finally {
      if (!released) held.release();
      await db.destroy();
    }
  });
});
