/**
 * Review findings (failed first), reviews 26 of b165ba9 and 27 of a1c08e8: what a handler (or the database's configuration) leaves in the session of a pooled
 * connection, and what it does to ferry's own statements in the next handler transaction.
 *
 * Most session state a handler can set is harmless to ferry: a session search_path or role that
 * hides ferry's table fails the completion in the same transaction, whose rollback undoes the SET;
 * a session `app.tenant_id` is overridden by the tenancy wrapper's transaction-local set_config;
 * statement_timeout / lock_timeout are set transaction-locally by ferry's first statement. The
 * one that is not: the transaction isolation level. ferry's handler transaction never pins it, and
 * its completion (the fenced UPDATE of the receipt, at the end of the handler transaction) updates
 * a row that ferry's own lease heartbeat updated, on another connection, while the handler ran.
 * Under REPEATABLE READ (a database or role default `default_transaction_isolation`, or a session
 * default a previous handler left on the pooled connection) that completion fails with SQLSTATE
 * 40001 ("could not serialize access due to concurrent update"): a handler that did its work
 * correctly is rolled back and retried, and every attempt that lasts longer than one heartbeat
 * fails the same way, until the receipt is DEAD.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import {
  fromPg,
  fromPrisma,
  pgTransactions,
  prismaTransactions,
  type PrismaTransactionLike,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, prismaOnPool, type TestDatabase } from '../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow, waitFor } from './inbox/helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';
const WORKER = {
  concurrency: 1,
  prefetch: 0,
  leaseMs: 4_000,
  heartbeatIntervalMs: 150,
  transactionTimeoutMs: 10_000,
  maxAttempts: 3,
} as const;

interface Subject<TTx> {
  readonly adapter: TransactionAdapter<TTx>;
  write(tx: TTx, receiptId: string, note: string): Promise<unknown>;
  end(): Promise<void>;
}
type Factory = (t: TestDatabase) => Subject<unknown>;

// Two connections: the handler transaction holds one, the lease heartbeat uses the other.
const newPool = (t: TestDatabase): Pool => listened(new Pool({ connectionString: t.url, max: 2 }));

const pg: Factory = (t) => {
  const pool = newPool(t);
  const subject: Subject<PoolClient> = {
    adapter: pgTransactions(pool),
    write: (tx, id, note) => tx.query(INSERT, [id, note]),
    end: () => pool.end(),
  };
  return subject as Subject<unknown>;
};

const kysely: Factory = (t) => {
  const pool = newPool(t);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const subject: Subject<Transaction<Record<string, never>>> = {
    adapter: kyselyTransactions(db),
    write: (trx, id, note) =>
      sql`INSERT INTO business_rows (receipt_id, note) VALUES (${id}::uuid, ${note})`.execute(trx),
    end: () => db.destroy(),
  };
  return subject as Subject<unknown>;
};

const prisma: Factory = (t) => {
  const pool = newPool(t);
  const client = prismaOnPool(pool);
  const subject: Subject<PrismaTransactionLike> = {
    adapter: prismaTransactions(client),
    write: (tx, id, note) => fromPrisma(tx).execute(INSERT, [id, note]),
    end: async () => {
      await client.$disconnect();
      await pool.end();
    },
  };
  return subject as Subject<unknown>;
};

const ADAPTERS: Array<[string, Factory]> = [
  ['pgTransactions(pool)', pg],
  ['kyselyTransactions(db)', kysely],
  ['prismaTransactions(prisma)', prisma],
];

async function leaseOf(t: TestDatabase, id: string): Promise<string> {
  const [row] = await t.db.query<{ lease: string | null }>(
    'SELECT lease_expires_at::text AS lease FROM ferry_inbox_receipts WHERE id = $1::uuid',
    [id],
  );
  return row?.lease ?? '';
}

/** Returns once ferry's heartbeat has renewed the receipt's lease (committed, on another connection). */
async function untilLeaseRenewed(t: TestDatabase, id: string): Promise<void> {
  const before = await leaseOf(t, id);
  await waitFor('the lease heartbeat to renew the claim', async () => (await leaseOf(t, id)) !== before);
}

/** Runs the worker until the receipt is COMPLETED or DEAD, at most `rounds` times. */
async function settle(inbox: { runOnce(): Promise<unknown> }, t: TestDatabase, id: string, rounds: number) {
  for (let i = 0; i < rounds; i += 1) {
    const { status } = await receiptRow(t, id);
    if (status === 'COMPLETED' || status === 'DEAD') break;
    await inbox.runOnce();
    await sleep(5);
  }
  return receiptRow(t, id);
}

describe('review26: a database whose default isolation level is REPEATABLE READ', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
    // A legitimate configuration (some applications want snapshot reads by default); it applies
    // to the sessions opened from now on. The README says nothing of the isolation level ferry needs.
    await t.db.execute(`ALTER DATABASE ${t.name} SET default_transaction_isolation = 'repeatable read'`);
  });
  afterAll(async () => {
    await t.drop();
  });

  describe.each(ADAPTERS)('on %s', (_name, factory) => {
    // User: a handler that writes its row and takes a moment (longer than one heartbeat, here
    // until the heartbeat has renewed the lease once) and returns normally.
    // Contract: a handler that succeeds has its receipt COMPLETED with its writes, once.
    // Instead: the fenced completion updates the receipt row the heartbeat updated after the
    // transaction's snapshot: PostgreSQL fails it with 40001, the handler's work is rolled back and
    // the receipt retried, and every attempt fails the same way until it is DEAD.
    it('completes a handler that runs longer than one heartbeat', async () => {
      const subject = factory(t);
      const consumer = `rr-${_name.replace(/\W/g, '')}`;
      const inbox = makeInbox(subject.adapter, {
        worker: { ...WORKER, consumers: [consumer] },
        handlers: {
          [consumer]: async (_payload, context) => {
            await subject.write(context.tx, context.receiptId, 'done');
            await untilLeaseRenewed(t, context.receiptId);
          },
        },
      });
      try {
        const { record } = await inbox.accept(message({ consumer }));
        const row = await settle(inbox, t, record.id, WORKER.maxAttempts + 1);
        expect({ status: row.status, lastError: row.last_error }).toEqual({
          status: 'COMPLETED',
          lastError: null,
        });
        expect(await businessCount(t, record.id)).toBe(1);
      } finally {
        await inbox.close();
        await subject.end();
      }
    });
  });
});

describe('review26: a session isolation default left on the pooled connection by another handler', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  // What a handler leaves: review 26's REPEATABLE READ, and review 27's READ ONLY (failed first on
  // a1c08e8, which pinned the isolation level only: the rerun's BEGIN kept the session's READ ONLY
  // and ferry's completion failed with 25006), alone or with SERIALIZABLE, DEFERRABLE.
  const LEFT: Array<[string, string]> = [
    ['REPEATABLE READ', 'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ'],
    ['READ ONLY', 'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY'],
    [
      'SERIALIZABLE, READ ONLY, DEFERRABLE',
      'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE',
    ],
  ];

  // User: pgTransactions on a pool of one connection for the handlers (ferry's own statements on
  // another pool, as the README's Prisma recipe does with `db: fromPg(pool)`). A reporting
  // handler of tenant "acme" wants a consistent (or read-only) snapshot and writes `SET SESSION
  // CHARACTERISTICS AS TRANSACTION ...` (meant `SET TRANSACTION`); its transaction commits and its
  // connection goes back to the pool with the session default. The next handler on that
  // connection, another tenant's ordinary order handler, writes and lasts longer than one heartbeat.
  // Contract: a handler cannot harm its neighbours; the order handler succeeds, so its receipt is
  // COMPLETED with its one row.
  // Instead (before the fix): ferry's handler transaction inherited the session default; its
  // completion failed with 40001 against ferry's own lease renewal (or 25006 under READ ONLY), and
  // the other tenant's receipt was retried until DEAD.
  it.each(LEFT)(
    'pgTransactions: the next handler on the connection still completes (%s)',
    async (_name, set) => {
      const handlerPool = listened(new Pool({ connectionString: t.url, max: 1 }));
      const ferryPool = listened(new Pool({ connectionString: t.url, max: 2 }));
      const adapter: TransactionAdapter<PoolClient> = {
        ...pgTransactions(handlerPool),
        db: fromPg(ferryPool),
      };
      const inbox = makeInbox(adapter, {
        worker: WORKER,
        handlers: {
          report: async (_payload, context) => {
            await context.tx.query(set);
            await context.tx.query('SELECT count(*) FROM business_rows');
          },
          orders: async (_payload, context) => {
            await context.tx.query(INSERT, [context.receiptId, 'order']);
            await untilLeaseRenewed(t, context.receiptId);
          },
        },
      });
      try {
        const report = await inbox.accept(message({ consumer: 'report', tenantId: 'acme' }));
        expect(await settle(inbox, t, report.record.id, 2)).toMatchObject({ status: 'COMPLETED' });
        const order = await inbox.accept(message({ consumer: 'orders', tenantId: 'globex' }));
        const row = await settle(inbox, t, order.record.id, WORKER.maxAttempts + 1);
        expect({ status: row.status, lastError: row.last_error }).toEqual({
          status: 'COMPLETED',
          lastError: null,
        });
        expect(await businessCount(t, order.record.id)).toBe(1);
      } finally {
        await inbox.close();
        await handlerPool.end();
        await ferryPool.end();
      }
    },
  );
});
