/**
 * Every wait has a deadline, also the rollback of a transaction the worker gave up on. A hung
 * handler on Kysely (idle in its transaction, ignoring its signal) whose connection goes silent (a
 * network blackhole: no byte, no FIN, no RST) when close() gives up on it: Kysely sends its
 * ROLLBACK into the silence, and ferry, which cannot close Kysely's connection, stops waiting for
 * it after ABANDONED_END_MS and reports it (an `infrastructure-error`). The pool given to Kysely
 * sets `query_timeout`, as the README asks: pg then fails the ROLLBACK, and Kysely drops the
 * connection, so the pool is whole again. The transactions run through a TCP proxy (fault-tests'
 * TcpProxy); ferry's own statements (claim, settle) go straight to PostgreSQL.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg, type InboxEvent } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { TcpProxy } from '../../../../fault-tests/harness/tcpProxy';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, latch, makeInbox, message, waitFor } from './helpers';

/** Longer than ABANDONED_END_MS (5 s), so that ferry's deadline passes first. */
const QUERY_TIMEOUT_MS = 8_000;

let t: TestDatabase;
let proxy: TcpProxy;
let direct: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  direct = listened(new Pool({ connectionString: t.url, max: 2 }));
  const url = new URL(t.url);
  proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
});
afterAll(async () => {
  await proxy.close();
  await direct.end();
  // The silenced session stays idle in its transaction (for up to transactionTimeoutMs); the test
  // database's own idle connections are left alone (their pool has no error listener).
  await t.db.execute(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
  );
  await t.drop();
});

describe('a hung Kysely handler whose connection goes silent at close()', () => {
  it('is reported once its ROLLBACK has not answered within the deadline, and its connection is dropped by the pool query_timeout', async () => {
    const pool = listened(
      new Pool({ connectionString: proxy.urlFor(t.url), max: 2, query_timeout: QUERY_TIMEOUT_MS }),
    );
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
    const events: InboxEvent[] = [];
    const started = latch();
    let receiptId = '';
    const inbox = makeInbox(
      { ...kyselyTransactions(db), db: fromPg(direct) },
      {
        observer: (event) => void events.push(event),
        worker: {
          concurrency: 1,
          prefetch: 0,
          consumers: ['silent'],
          transactionTimeoutMs: 60_000,
          shutdownTimeoutMs: 100,
        },
        handlers: {
          silent: async (_payload, context) => {
            await sql`INSERT INTO business_rows (receipt_id, note) VALUES (${context.receiptId}::uuid, 'x')`.execute(
              context.tx as Transaction<Record<string, never>>,
            );
            started.open();
            await new Promise<void>(() => undefined);
          },
        },
      },
    );
    try {
      const run = (async () => {
        ({
          record: { id: receiptId },
        } = await inbox.accept(message({ consumer: 'silent' })));
        return inbox.runOnce();
      })();
      await started.promise;
      // The open connections go silent for good; new ones would pass.
      await proxy.setMode('blackhole');
      await proxy.setMode('pass', { keepDamaged: true });
      await inbox.close();
      expect(await run).toMatchObject({ claimed: 1, unresolved: 1 });
      const report = await waitFor('the unanswered rollback to be reported', async () =>
        events.find(
          (event) => event.type === 'infrastructure-error' && event.operation === 'abandon-transaction',
        ),
      );
      expect(report).toMatchObject({
        operation: 'abandon-transaction',
        error: expect.stringContaining('FERRY_TIMEOUT'),
      });
      await waitFor("the abandoned transaction's connection to be gone from the pool", async () =>
        pool.totalCount - pool.idleCount === 0 ? true : undefined,
      );
      // PostgreSQL ends the session (idle in transaction) in its own time; nothing was committed.
      expect(await businessCount(t, receiptId)).toBe(0);
    } finally {
      await db.destroy();
    }
  });
});
