/**
 * Review 90 (failed first): a handler that emits in parallel on its transaction.
 *
 * User: a handler that writes its row and emits its events side by side, `await Promise.all([
 * tx.query(INSERT, ...), emit(tx, orderPlaced), emit(tx, stockReserved)])`, as it would on any
 * client. Contract (README, Transactions): emit takes the handler's `context.tx` on every adapter,
 * and the events commit with the handler's writes and the receipt's completion. On Kysely and
 * Prisma they do.
 *
 * Instead, on pgTransactions: emit refuses the handler's client with FERRY_VALIDATION_FAILED ("a
 * node-postgres client with 1 statement(s) not yet answered ... ferry cannot tell whether the
 * client is in a transaction"), every attempt of the receipt, until it is DEAD. That refusal is
 * for the application's own client, whose BEGIN may not have been answered; the PoolClient a
 * handler gets is ferry's, lent inside ferry's BEGIN, so ferry knows where it stands: in its
 * transaction until the handler returns (after which it refuses every use anyway).
 */
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import {
  emit,
  fromPrisma,
  pgTransactions,
  prismaTransactions,
  type ApplicationTransaction,
  type PrismaTransactionLike,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, prismaOnPool, type TestDatabase } from '../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow } from './inbox/helpers';

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

interface Subject<TTx> {
  readonly adapter: TransactionAdapter<TTx>;
  write(tx: TTx, receiptId: string): Promise<unknown>;
  end(): Promise<void>;
}
type Factory = (t: TestDatabase) => Subject<unknown>;

const newPool = (t: TestDatabase): Pool => new Pool({ connectionString: t.url, max: 3 });

const pg: Factory = (t) => {
  const pool = newPool(t);
  const subject: Subject<PoolClient> = {
    adapter: pgTransactions(pool),
    write: (tx, id) => tx.query(INSERT, [id, 'parallel']),
    end: () => pool.end(),
  };
  return subject as Subject<unknown>;
};

const kysely: Factory = (t) => {
  const pool = newPool(t);
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool }) });
  const subject: Subject<Transaction<Record<string, never>>> = {
    adapter: kyselyTransactions(db),
    write: (trx, id) =>
      sql`INSERT INTO business_rows (receipt_id, note) VALUES (${id}::uuid, 'parallel')`.execute(trx),
    end: () => db.destroy(),
  };
  return subject as Subject<unknown>;
};

const prisma: Factory = (t) => {
  const pool = newPool(t);
  const client = prismaOnPool(pool);
  const subject: Subject<PrismaTransactionLike> = {
    adapter: prismaTransactions(client),
    write: (tx, id) => fromPrisma(tx).execute(INSERT, [id, 'parallel']),
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

describe('review90: a handler that writes and emits in parallel on its transaction', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  describe.each(ADAPTERS)('on %s', (name, factory) => {
    // A consumer of its own: another adapter's receipt is never this worker's to claim.
    const consumer = `orders-${name.replace(/\W/g, '')}`;
    let subject: Subject<unknown>;
    beforeAll(() => {
      subject = factory(t);
    });
    afterAll(async () => {
      await subject.end();
    });

    it('completes the receipt with its row and both events, in one attempt', async () => {
      const inbox = makeInbox(subject.adapter, {
        handlers: {
          [consumer]: async (_payload, { tx, receiptId }) => {
            const on = tx as ApplicationTransaction;
            await Promise.all([
              subject.write(tx, receiptId),
              emit(on, { type: 'order.placed', payload: { receiptId } }),
              emit(on, { type: 'stock.reserved', payload: { receiptId } }),
            ]);
          },
        },
        worker: { concurrency: 1, prefetch: 0, maxAttempts: 3 },
      });
      const receipt = await inbox.accept(message({ consumer }));
      const result = await inbox.runOnce();
      expect((await receiptRow(t, receipt.record.id)).last_error).toBeNull();
      expect(result).toMatchObject({ claimed: 1, completed: 1 });
      expect(await businessCount(t, receipt.record.id)).toBe(1);
      const events = await t.db.query<{ type: string }>(
        "SELECT event_type AS type FROM outbox_events WHERE payload->>'receiptId' = $1 ORDER BY event_type",
        [receipt.record.id],
      );
      expect(events.map((event) => event.type)).toEqual(['order.placed', 'stock.reserved']);
    });
  });
});
