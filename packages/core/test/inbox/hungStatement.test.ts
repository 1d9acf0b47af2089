/**
 * A handler inside a long statement (not idle in its transaction, as hungHandler.test.ts's are)
 * when close() gives up on it: `pg_sleep(40)`, well within transactionTimeoutMs (60 s), so
 * PostgreSQL's statement_timeout does not end it. The transaction ends for real all the same, on
 * the server too: its backend stops running the statement and its row lock goes, and its pooled
 * connection comes back (or is destroyed).
 * - node-postgres closes the connection; the backend notices the closed socket within
 *   client_connection_check_interval (set by the handler transaction's first statement), not only
 *   when it next writes to the client, 40 s later.
 * - Kysely waits for the running statement before it rolls back: ferry cancels that statement
 *   (pg_cancel_backend on the backend its first statement read) instead of waiting for its end.
 * Prisma cannot be told that ferry gave up (hungHandler.test.ts).
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions, type TransactionAdapter } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, latch, makeInbox, message, waitFor } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
});
afterAll(async () => {
  // A backend still sleeping (a failed test) would hold the drop for 40 s.
  await t.db.execute(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%pg_sleep(40)%'`,
  );
  await t.drop();
});

interface Subject {
  readonly pool: Pool;
  readonly adapter: TransactionAdapter<unknown>;
  run(tx: unknown, text: string): Promise<Array<Record<string, unknown>>>;
  end(): Promise<void>;
}

const subjects: Array<[string, () => Subject]> = [
  [
    'pgTransactions(pool)',
    () => {
      const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
      return {
        pool,
        adapter: pgTransactions(pool) as TransactionAdapter<unknown>,
        run: async (tx, text) => (await (tx as PoolClient).query(text)).rows,
        end: () => pool.end(),
      };
    },
  ],
  [
    'kyselyTransactions(db)',
    () => {
      const pool = listened(new Pool({ connectionString: t.url, max: 2 }));
      // The listener the README asks for: Kysely does not hear a checked-out connection's `error`.
      pool.on('connect', (client) => client.on('error', () => undefined));
      const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
      const run = async (tx: unknown, text: string) =>
        (await sql.raw<Record<string, unknown>>(text).execute(tx as Transaction<Record<string, never>>)).rows;
      return {
        pool,
        adapter: kyselyTransactions(db) as TransactionAdapter<unknown>,
        run,
        end: () => db.destroy(),
      };
    },
  ],
];

describe.each(subjects)('a handler inside a long statement at close() on %s', (_name, factory) => {
  it('has its statement ended on the server when close() gives up: its backend is idle or gone, its lock is free, its connection is back', async () => {
    const subject = factory();
    const started = latch();
    let pid: unknown;
    let receiptId = '';
    const inbox = makeInbox(subject.adapter, {
      worker: {
        concurrency: 1,
        prefetch: 0,
        consumers: ['sleeper'],
        transactionTimeoutMs: 60_000,
        shutdownTimeoutMs: 100,
      },
      handlers: {
        sleeper: async (_payload, context) => {
          [{ pid }] = (await subject.run(context.tx, 'SELECT pg_backend_pid() AS pid')) as [{ pid: unknown }];
          await subject.run(
            context.tx,
            `INSERT INTO business_rows (receipt_id, note) VALUES ('${context.receiptId}'::uuid, 'x')`,
          );
          started.open();
          await subject.run(context.tx, 'SELECT pg_sleep(40)');
        },
      },
    });
    try {
      const run = (async () => {
        ({
          record: { id: receiptId },
        } = await inbox.accept(message({ consumer: 'sleeper' })));
        return inbox.runOnce();
      })();
      await started.promise;
      await inbox.close();
      expect(await run).toMatchObject({ claimed: 1, unresolved: 1 });
      await waitFor("the abandoned transaction's backend to be idle or gone", async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1::int AND state <> 'idle'`,
          [pid],
        );
        return row?.n === 0;
      });
      // Its row lock is gone: a write that conflicts with it goes through (lock_timeout refuses a wait).
      await t.db.transaction(async (tx) => {
        await tx.execute("SET LOCAL lock_timeout = '500ms'");
        await tx.execute('LOCK TABLE business_rows IN ACCESS EXCLUSIVE MODE');
      });
      await waitFor("the abandoned transaction's connection to be back in the pool or gone", async () =>
        subject.pool.totalCount - subject.pool.idleCount === 0 ? true : undefined,
      );
      expect(await businessCount(t, receiptId)).toBe(0);
    } finally {
      await subject.end();
    }
  });
});
