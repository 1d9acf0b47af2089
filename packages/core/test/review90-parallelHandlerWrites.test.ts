/**
 * Review 90 (failed first): a handler that runs work in parallel on its transaction
 * (`Promise.all`), one branch failing while another is between two statements.
 *
 * User: `await Promise.all([checkStock(tx), recordOrder(tx)])`, where recordOrder reads, then
 * writes, and checkStock throws. Promise.all rejects at the first failure, so the handler throws
 * while recordOrder still runs: its read is on the connection, its write comes once the read
 * answers. Contract (README, Transactions): the handler's writes and the completion commit or roll
 * back together; a thrown handler rolls back everything it wrote, and the receipt is retried.
 *
 * Instead, on Kysely: Kysely sends its ROLLBACK on the connection as soon as the callback rejects,
 * outside the Transaction's own queue of statements, and marks the Transaction rolled back only
 * once the ROLLBACK has answered. recordOrder's write, sent when its read answered (while the
 * ROLLBACK was in flight), passes the Transaction's check and is queued by node-postgres after the
 * ROLLBACK: it runs outside any transaction and commits on its own. The receipt is retried, and
 * each attempt leaves one more committed row of a handler that never succeeded. kysely.ts already
 * holds the connection against exactly this when ferry abandons a transaction, not when the work
 * itself ends. node-postgres (the lent client is refused before ferry's ROLLBACK is sent) and
 * Prisma (its transaction refuses statements once closing) keep the write out.
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import {
  fromPrisma,
  pgTransactions,
  prismaTransactions,
  type PrismaTransactionLike,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, prismaOnPool, type TestDatabase } from '../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message } from './inbox/helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

interface Subject<TTx> {
  readonly adapter: TransactionAdapter<TTx>;
  /** A read that takes a moment, then a write: the branch still running when the other fails. */
  readThenWrite(tx: TTx, receiptId: string): Promise<unknown>;
  end(): Promise<void>;
}
type Factory = (t: TestDatabase) => Subject<unknown>;

const newPool = (t: TestDatabase): Pool => new Pool({ connectionString: t.url, max: 3 });

const pg: Factory = (t) => {
  const pool = newPool(t);
  const subject: Subject<PoolClient> = {
    adapter: pgTransactions(pool),
    readThenWrite: async (tx, id) => {
      await tx.query('SELECT pg_sleep(0.2)');
      await tx.query(INSERT, [id, 'parallel']);
    },
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
    readThenWrite: async (trx, id) => {
      await sql`SELECT pg_sleep(0.2)`.execute(trx);
      await sql`INSERT INTO business_rows (receipt_id, note) VALUES (${id}::uuid, 'parallel')`.execute(trx);
    },
    end: () => db.destroy(),
  };
  return subject as Subject<unknown>;
};

const prisma: Factory = (t) => {
  const pool = newPool(t);
  const client = prismaOnPool(pool);
  const subject: Subject<PrismaTransactionLike> = {
    adapter: prismaTransactions(client),
    readThenWrite: async (tx, id) => {
      await fromPrisma(tx).query('SELECT pg_sleep(0.2)');
      await fromPrisma(tx).execute(INSERT, [id, 'parallel']);
    },
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

describe('review90: a handler whose parallel branch fails while another is between statements', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  describe.each(ADAPTERS)('on %s', (name, factory) => {
    // A consumer of its own: another adapter's retried receipt is never this worker's to claim.
    const consumer = `orders-${name.replace(/\W/g, '')}`;
    let subject: Subject<unknown>;
    beforeAll(() => {
      subject = factory(t);
    });
    afterAll(async () => {
      await subject.end();
    });

    it('rolls back every write of the failed attempt: the branch that went on writes nothing', async () => {
      const branches: Array<Promise<unknown>> = [];
      const inbox = makeInbox(subject.adapter, {
        handlers: {
          [consumer]: async (_payload, { tx, receiptId }) => {
            const writing = subject.readThenWrite(tx, receiptId);
            branches.push(writing);
            await Promise.all([writing, Promise.reject(new Error('out of stock: the other branch failed'))]);
          },
        },
        worker: { concurrency: 1, prefetch: 0, maxAttempts: 5 },
      });
      const receipt = await inbox.accept(message({ consumer }));
      const result = await inbox.runOnce();
      expect(result).toMatchObject({ claimed: 1, retried: 1 });
      // The branch has settled (its write done, or refused) before the rows are counted.
      await Promise.allSettled(branches);
      expect(branches).toHaveLength(1);
      expect(await businessCount(t, receipt.record.id)).toBe(0);
    });
  });
});
