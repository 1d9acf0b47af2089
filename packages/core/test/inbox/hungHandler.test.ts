/**
 * A handler whose promise never settles (it ignores its signal) on every transaction adapter ferry
 * ships, against the real PostgreSQL. When the worker gives up on the handler transaction (a
 * heartbeat after `transactionTimeoutMs`), the transaction ends for real: its pooled connection
 * comes back (or is destroyed) and PostgreSQL rolls its writes back. So a pool of N survives N + 1
 * hung handlers in turn and a normal message still completes; none of the hung handlers' writes
 * is committed, and a hung handler that wakes up later cannot write or commit (the fence).
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  fromPrisma,
  pgTransactions,
  prismaTransactions,
  type PrismaTransactionLike,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, prismaOnPool, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, latch, makeInbox, message, waitFor } from './helpers';

const POOL_SIZE = 2;
const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

/** One adapter on a pool of POOL_SIZE, and how a handler writes a business row in its transaction. */
interface Subject<TTx> {
  readonly pool: Pool;
  readonly adapter: TransactionAdapter<TTx>;
  write(tx: TTx, receiptId: string, note: string): Promise<unknown>;
  end(): Promise<void>;
}

type Factory = (t: TestDatabase) => Subject<unknown>;

function newPool(t: TestDatabase): Pool {
  return listened(new Pool({ connectionString: t.url, max: POOL_SIZE }));
}

const pg: Factory = (t) => {
  const pool = newPool(t);
  const subject: Subject<PoolClient> = {
    pool,
    adapter: pgTransactions(pool),
    write: (tx, id, note) => tx.query(INSERT, [id, note]),
    end: () => pool.end(),
  };
  return subject as Subject<unknown>;
};

const kysely: Factory = (t) => {
  const pool = newPool(t);
  // The listener the README asks for: Kysely does not hear a checked-out connection's `error`.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const subject: Subject<Transaction<Record<string, never>>> = {
    pool,
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
    pool,
    adapter: prismaTransactions(client),
    write: (tx, id, note) => fromPrisma(tx).execute(INSERT, [id, note]),
    end: async () => {
      await client.$disconnect();
      await pool.end();
    },
  };
  return subject as Subject<unknown>;
};

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
});
afterAll(async () => {
  await t.drop();
});

const WORKER = { concurrency: 1, prefetch: 0, transactionTimeoutMs: 300 } as const;
/** Short, so that a claim or an acceptance waiting for a pool connection fails the test quickly. */
const STATEMENT_TIMEOUT_MS = 3_000;

const ADAPTERS: Array<[string, Factory]> = [
  ['pgTransactions(pool)', pg],
  ['kyselyTransactions(db)', kysely],
  ['prismaTransactions(prisma)', prisma],
];

describe.each(ADAPTERS)('hung handlers on %s', (_name, factory) => {
  it(`a pool of ${POOL_SIZE} survives ${POOL_SIZE + 1} hung handlers in turn: a normal message completes, no hung write is committed, a woken one cannot write`, async () => {
    const subject = factory(t);
    const wake = latch();
    const late: Array<Promise<unknown>> = [];
    /** An inbox that handles (and claims) only `consumer`, on the subject's pool. */
    const inboxFor = (consumer: string, handle: (tx: unknown, receiptId: string) => Promise<void>) =>
      makeInbox(subject.adapter, {
        statementTimeoutMs: STATEMENT_TIMEOUT_MS,
        worker: { ...WORKER, consumers: [consumer] },
        handlers: { [consumer]: async (_payload, context) => handle(context.tx, context.receiptId) },
      });
    const hung = inboxFor('hung', async (tx, receiptId) => {
      await subject.write(tx, receiptId, 'before the hang');
      await wake.promise;
      const write = subject.write(tx, receiptId, 'after waking up');
      late.push(
        write.then(
          () => 'written',
          (error: unknown) => error,
        ),
      );
      await write;
    });
    const normal = inboxFor('normal', async (tx, receiptId) => {
      await subject.write(tx, receiptId, 'normal');
    });
    try {
      const hungIds: string[] = [];
      for (let i = 0; i <= POOL_SIZE; i += 1) {
        const { record } = await hung.accept(message({ consumer: 'hung' }));
        hungIds.push(record.id);
        expect(await hung.runOnce()).toMatchObject({ claimed: 1, completed: 0, retried: 1 });
      }
      await waitFor('every connection of the hung handlers to be back in the pool or gone', async () =>
        subject.pool.totalCount - subject.pool.idleCount === 0 ? true : undefined,
      );

      const { record } = await normal.accept(message({ consumer: 'normal' }));
      expect(await normal.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      expect(await businessCount(t, record.id)).toBe(1);
      for (const id of hungIds) expect(await businessCount(t, id)).toBe(0);

      // The hung handlers wake up: their writes are refused, nothing of theirs commits.
      wake.open();
      const answers = await waitFor('the woken handlers to be answered', async () =>
        late.length === POOL_SIZE + 1 ? Promise.all(late) : undefined,
      );
      for (const answer of answers) expect(answer).toBeInstanceOf(Error);
      for (const id of hungIds) expect(await businessCount(t, id)).toBe(0);
    } finally {
      wake.open();
      await hung.close();
      await normal.close();
      await subject.end();
    }
  });
});

describe.each(ADAPTERS)(
  'a handler that keeps its transaction busy past the deadline on %s',
  (_name, factory) => {
    it('commits none of its writes, not even those it sends while the transaction is being ended', async () => {
      const subject = factory(t);
      let writes = 0;
      let stopped: unknown;
      const inbox = makeInbox(subject.adapter, {
        worker: { ...WORKER, consumers: ['busy'] },
        handlers: {
          busy: async (_payload, context) => {
            // Ignores its signal; short writes, so no statement and no pause reaches the timeouts.
            try {
              for (;;) {
                await subject.write(context.tx, context.receiptId, `write ${writes}`);
                writes += 1;
              }
            } catch (error) {
              stopped = error;
              throw error;
            }
          },
        },
      });
      try {
        const { record } = await inbox.accept(message({ consumer: 'busy' }));
        expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 0, retried: 1 });
        await waitFor('the handler to be stopped by a refused write', async () => stopped !== undefined);
        expect(writes).toBeGreaterThan(0);
        expect(await businessCount(t, record.id)).toBe(0);
      } finally {
        await subject.end();
      }
    });
  },
);

// Prisma cannot be told that ferry gave up: its own `timeout` (transactionTimeoutMs) ends the transaction.
describe.each(ADAPTERS.filter(([name]) => !name.startsWith('prisma')))(
  'a hung handler at close() on %s',
  (_name, factory) => {
    it('is ended when close() gives up on it, not transactionTimeoutMs later: the pool is whole again and nothing is committed', async () => {
      const subject = factory(t);
      const started = latch();
      const inbox = makeInbox(subject.adapter, {
        worker: {
          ...WORKER,
          consumers: ['hung-at-close'],
          transactionTimeoutMs: 600_000,
          shutdownTimeoutMs: 100,
        },
        handlers: {
          'hung-at-close': async (_payload, context) => {
            await subject.write(context.tx, context.receiptId, 'before the hang');
            started.open();
            await new Promise<void>(() => undefined);
          },
        },
      });
      try {
        const { record } = await inbox.accept(message({ consumer: 'hung-at-close' }));
        const run = inbox.runOnce();
        await started.promise;
        await inbox.close();
        expect(await run).toMatchObject({ claimed: 1, unresolved: 1 });
        await waitFor("the hung handler's connection to be back in the pool or gone", async () =>
          subject.pool.totalCount - subject.pool.idleCount === 0 ? true : undefined,
        );
        expect(await businessCount(t, record.id)).toBe(0);
      } finally {
        // A pool that still lends the hung handler's connection would wait for it for ever.
        const whole = subject.pool.totalCount === subject.pool.idleCount;
        if (whole) await subject.end();
        else void subject.end();
      }
    });
  },
);
