/**
 * The connection of a handler transaction, against the real PostgreSQL: it dies while the
 * handler waits, the handler never returns, releases its PoolClient or keeps using it after
 * returning. The process survives, nothing is written outside the transaction, the receipt is
 * retried and the pool recovers.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { pgTransactions, type InboxHandlerContext, type RunOnceResult } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  latch,
  makeInbox,
  message,
  receiptRow,
  waitFor,
} from './helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  pool = listened(new Pool({ connectionString: t.url, max: 2 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

type Handler = (context: InboxHandlerContext<PoolClient>) => Promise<void>;

function inboxOf(consumer: string, handle: Handler, worker: { transactionTimeoutMs?: number } = {}) {
  return makeInbox(pgTransactions(pool), {
    worker,
    handlers: { [consumer]: async (_payload, context) => handle(context) },
  });
}

/** Starts runOnce(); `settled()` is its result once it resolved, undefined before. */
function running(inbox: { runOnce(): Promise<RunOnceResult> }): () => RunOnceResult | undefined {
  let result: RunOnceResult | undefined;
  void inbox.runOnce().then((r) => (result = r));
  return () => result;
}

describe('a handler transaction on node-postgres whose connection is lost', () => {
  it('fails at once when the backend is terminated while the handler waits: retried, nothing written, the pool recovers', async () => {
    const gate = latch();
    let backend: number | undefined;
    let lateWrite: Promise<unknown> | undefined;
    const inbox = inboxOf('pg-killed', async (context) => {
      await context.tx.query(INSERT, [context.receiptId, `attempt ${context.attempt}`]);
      if (context.attempt > 1) return;
      backend = (await context.tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await gate.promise;
      lateWrite = context.tx.query(INSERT, [context.receiptId, 'after the loss']).catch((e: unknown) => e);
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-killed' }));
    const settled = running(inbox);
    try {
      const pid = await waitFor('the handler to start', async () => backend);
      await t.db.query('SELECT pg_terminate_backend($1::int)', [pid]);
      const result = await waitFor('runOnce to settle while the handler still waits', async () => settled());
      expect(result).toMatchObject({ claimed: 1, completed: 0, retried: 1 });
      expect(gate.opened()).toBe(false);
    } finally {
      gate.open();
    }
    expect(
      await waitFor('the late write to be answered', async () => lateWrite && (await lateWrite)),
    ).toMatchObject({ code: 'FERRY_TRANSACTION_MISUSE' });
    expect(await businessCount(t, record.id)).toBe(0);
    expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(await businessCount(t, record.id)).toBe(1);
    expect(pool.totalCount).toBeLessThanOrEqual(2);
  });

  it('lets PostgreSQL end a handler that never returns at transactionTimeoutMs: retried, the connection comes back', async () => {
    const gate = latch();
    const inbox = inboxOf(
      'pg-stuck',
      async (context) => {
        await context.tx.query(INSERT, [context.receiptId, 'stuck']);
        await gate.promise;
      },
      { transactionTimeoutMs: 300 },
    );
    const { record } = await inbox.accept(message({ consumer: 'pg-stuck' }));
    const settled = running(inbox);
    try {
      const result = await waitFor('runOnce to settle while the handler is stuck', async () => settled());
      expect(result).toMatchObject({ claimed: 1, completed: 0, retried: 1 });
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'RETRYABLE' });
      expect(await businessCount(t, record.id)).toBe(0);
      await waitFor('the pool to hold no connection for the stuck handler', async () =>
        pool.totalCount - pool.idleCount === 0 ? true : undefined,
      );
    } finally {
      gate.open();
    }
  });
});

describe('the PoolClient of a node-postgres handler', () => {
  it('refuses use after the handler returned: nothing is written outside the transaction', async () => {
    let kept: PoolClient | undefined;
    const inbox = inboxOf('pg-kept', async (context) => {
      kept = context.tx;
      await context.tx.query(INSERT, [context.receiptId, 'inside']);
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-kept' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    const late = await kept!.query(INSERT, [record.id, 'after the commit']).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'FERRY_TRANSACTION_MISUSE' });
    expect(await businessCount(t, record.id)).toBe(1);
  });

  it('refuses a method the handler read during its transaction and called after it (a repository built with query.bind)', async () => {
    let kept: PoolClient['query'] | undefined;
    const inbox = inboxOf('pg-kept-method', async (context) => {
      kept = context.tx.query.bind(context.tx);
      await kept(INSERT, [context.receiptId, 'inside']);
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-kept-method' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
    const late = await (kept!(INSERT, [record.id, 'after the commit']) as Promise<unknown>).catch(
      (e: unknown) => e,
    );
    expect(late).toMatchObject({ code: 'FERRY_TRANSACTION_MISUSE' });
    // The callback form is refused through its callback.
    const viaCallback = await new Promise((resolve) => {
      (kept as unknown as (text: string, values: unknown[], cb: (e: unknown) => void) => void)(
        INSERT,
        [record.id, 'after the commit, callback'],
        resolve,
      );
    });
    expect(viaCallback).toMatchObject({ code: 'FERRY_TRANSACTION_MISUSE' });
    expect(await businessCount(t, record.id)).toBe(1);
  });

  it('refuses release() in the handler: the connection never goes back to the pool inside the transaction', async () => {
    let refused: unknown;
    const inbox = inboxOf('pg-released', async (context) => {
      await context.tx.query(INSERT, [context.receiptId, 'before the release']);
      try {
        context.tx.release();
      } catch (error) {
        refused = error;
        throw error;
      }
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-released' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 0, retried: 1 });
    expect(refused).toMatchObject({ code: 'FERRY_TRANSACTION_MISUSE' });
    expect(await businessCount(t, record.id)).toBe(0);
    const idle = await pool.connect();
    try {
      expect(idle.getTransactionStatus()).toBe('I');
    } finally {
      idle.release();
    }
  });

  // On HEAD end() closed the transaction's connection under ferry and resolved: the handler went
  // on as if nothing had happened, and the failure came at ferry's completion, as a lost connection.
  it('refuses end() in the handler: ferry ends the transaction and its connection, and the receipt is retried', async () => {
    let refused: unknown;
    const inbox = inboxOf('pg-ended', async (context) => {
      await context.tx.query(INSERT, [context.receiptId, 'before the end']);
      try {
        await context.tx.end();
      } catch (error) {
        refused = error;
        throw error;
      }
    });
    const { record } = await inbox.accept(message({ consumer: 'pg-ended' }));
    expect(await inbox.runOnce()).toMatchObject({ completed: 0, retried: 1 });
    expect(refused).toMatchObject({ code: 'FERRY_TRANSACTION_MISUSE' });
    expect(await businessCount(t, record.id)).toBe(0);
    const [row] = await t.db.query<{ status: string }>(
      'SELECT status FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [record.id],
    );
    expect(row?.status).toBe('RETRYABLE');
  });
});

describe('a handler transaction on Kysely whose connection is lost', () => {
  it('is retried and the pool recovers when the pool has the error listener the README asks for', async () => {
    const kyselyPool = listened(new Pool({ connectionString: t.url, max: 2 }));
    kyselyPool.on('connect', (client) => client.on('error', () => undefined));
    const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: kyselyPool }) });
    const gate = latch();
    let backend: number | undefined;
    const write = (trx: Transaction<Record<string, never>>, receiptId: string) =>
      sql`INSERT INTO business_rows (receipt_id, note) VALUES (${receiptId}::uuid, 'k')`.execute(trx);
    const inbox = makeInbox(kyselyTransactions(kysely), {
      handlers: {
        'kysely-killed': async (_payload, context) => {
          await write(context.tx, context.receiptId);
          if (context.attempt > 1) return;
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(context.tx);
          backend = rows[0]?.pid;
          await gate.promise;
          await write(context.tx, context.receiptId);
        },
      },
    });
    try {
      const { record } = await inbox.accept(message({ consumer: 'kysely-killed' }));
      const settled = running(inbox);
      const pid = await waitFor('the handler to start', async () => backend);
      await t.db.query('SELECT pg_terminate_backend($1::int)', [pid]);
      gate.open();
      expect(await waitFor('runOnce to settle', async () => settled())).toMatchObject({ retried: 1 });
      expect(await businessCount(t, record.id)).toBe(0);
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      expect(await businessCount(t, record.id)).toBe(1);
    } finally {
      gate.open();
      await inbox.close();
      await kysely.destroy();
    }
  });
});
