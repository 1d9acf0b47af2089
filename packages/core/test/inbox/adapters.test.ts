/**
 * The handler transaction on every transaction adapter, against the real PostgreSQL: the
 * handler's writes (through the application's own client API), the events it emits and the
 * receipt's completion commit together or not at all.
 */
import { Kysely, PostgresDialect, sql, type Generated } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  createInboxTenancyContext,
  emit,
  ferryStatementNames,
  fromPg,
  pgTransactions,
  prismaTransactions,
  type ApplicationTransaction,
  type InboxHandlerContext,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow } from './helpers';

interface Database {
  business_rows: { id: Generated<string>; receipt_id: string; note: string | null };
}

interface AdapterCase<TTx extends ApplicationTransaction> {
  /** The adapter on the test database, and how to close what it opened. */
  open(t: TestDatabase): { adapter: TransactionAdapter<TTx>; close(): Promise<void> };
  /** A business write in the handler transaction, through the application's own client API. */
  write(tx: TTx, receiptId: string, note: string): Promise<void>;
  /** Passes when `tx` is the application's own transaction object, not a ferry shim. */
  expectOwn(tx: TTx): void;
  /** Ends the transaction from inside the handler, as a careless handler would. */
  end(tx: TTx, command: 'COMMIT' | 'ROLLBACK'): Promise<void>;
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
});
afterAll(async () => {
  await t.drop();
});

async function outboxRows(receiptId: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'receiptId' = $1`,
    [receiptId],
  );
  return row?.n ?? -1;
}

/** Another worker took the claim over: same receipt, a new claim token. */
async function takeLease(receiptId: string): Promise<void> {
  await t.db.execute(
    `UPDATE ferry_inbox_receipts SET claim_token = gen_random_uuid(),
       lease_expires_at = clock_timestamp() + interval '1 minute' WHERE id = $1::uuid`,
    [receiptId],
  );
}

function describeAdapter<TTx extends ApplicationTransaction>(name: string, spec: AdapterCase<TTx>): void {
  describe(`the handler transaction on ${name}`, () => {
    let adapter: TransactionAdapter<TTx>;
    let close: () => Promise<void>;
    beforeAll(() => {
      ({ adapter, close } = spec.open(t));
    });
    afterAll(() => close());

    /** One inbox with one handler under a consumer name of this test's own. */
    function run(consumer: string, handle: (context: InboxHandlerContext<TTx>) => Promise<void>) {
      return makeInbox(adapter, { handlers: { [consumer]: async (_payload, context) => handle(context) } });
    }

    it('commits the handler’s write with the completion', async () => {
      const inbox = run(`${name}-ok`, async (context) => {
        spec.expectOwn(context.tx);
        await spec.write(context.tx, context.receiptId, 'done');
      });
      const { record } = await inbox.accept(message({ consumer: `${name}-ok` }));
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      expect(await businessCount(t, record.id)).toBe(1);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED' });
    });

    it('rolls the write back with a handler that throws after it, and the retry commits once', async () => {
      let attempts = 0;
      const inbox = run(`${name}-throws`, async (context) => {
        attempts += 1;
        await spec.write(context.tx, context.receiptId, `attempt ${attempts}`);
        if (attempts === 1) throw new Error('business failure after the write');
      });
      const { record } = await inbox.accept(message({ consumer: `${name}-throws` }));
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 0 });
      expect(await businessCount(t, record.id)).toBe(0);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'RETRYABLE', attempts: 1 });
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      const notes = await t.db.query<{ note: string }>(
        'SELECT note FROM business_rows WHERE receipt_id = $1::uuid',
        [record.id],
      );
      expect(notes).toEqual([{ note: 'attempt 2' }]);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED' });
    });

    it('rolls back the writes of a handler whose lease was taken over while it ran', async () => {
      const inbox = run(`${name}-lease`, async (context) => {
        await spec.write(context.tx, context.receiptId, 'too late');
        await emit(context.tx, { type: 'adapter.emitted', payload: { receiptId: context.receiptId } });
        await takeLease(context.receiptId);
      });
      const { record } = await inbox.accept(message({ consumer: `${name}-lease` }));
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 0, leaseLost: 1 });
      expect(await businessCount(t, record.id)).toBe(0);
      expect(await outboxRows(record.id)).toBe(0);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'PROCESSING', completed_at: null });
    });

    it.each([
      ['ROLLBACK', 0],
      ['COMMIT', 1],
    ] as const)(
      'does not complete a receipt whose handler ran %s on its transaction (retried, FERRY_TRANSACTION_MISUSE)',
      async (command, kept) => {
        const consumer = `${name}-${command.toLowerCase()}`;
        const inbox = run(consumer, async (context) => {
          await spec.write(context.tx, context.receiptId, 'before the end');
          await spec.end(context.tx, command);
        });
        const { record } = await inbox.accept(message({ consumer }));
        expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 0, retried: 1 });
        const row = await receiptRow(t, record.id);
        expect(row).toMatchObject({ status: 'RETRYABLE', completed_at: null });
        expect(row.last_error).toContain('FERRY_TRANSACTION_MISUSE');
        // What the handler committed itself stays committed: ferry cannot take it back.
        expect(await businessCount(t, record.id)).toBe(kept);
      },
    );

    it('sets the tenant for RLS on the handler’s transaction (createInboxTenancyContext)', async () => {
      let seen: unknown;
      const inbox = makeInbox(adapter, {
        handlerContext: createInboxTenancyContext(),
        handlers: {
          [`${name}-tenant`]: async (_payload, context) => {
            const rows = await adapter
              .bind(context.tx)
              .query<{ tenant: string }>(`SELECT current_setting('app.tenant_id', true) AS tenant`);
            seen = rows[0]?.tenant;
          },
        },
      });
      await inbox.accept(message({ consumer: `${name}-tenant`, tenantId: 'tenant-a' }));
      expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
      expect(seen).toBe('tenant-a');
    });

    it('commits an event emitted on the handler’s transaction with it, and drops it on rollback', async () => {
      const inbox = run(`${name}-emit`, async (context) => {
        await emit(context.tx, { type: 'adapter.emitted', payload: { receiptId: context.receiptId } });
        if (context.attempt === 1) throw new Error('business failure after the emit');
      });
      const { record } = await inbox.accept(message({ consumer: `${name}-emit` }));
      expect(await inbox.runOnce()).toMatchObject({ completed: 0 });
      expect(await outboxRows(record.id)).toBe(0);
      expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
      expect(await outboxRows(record.id)).toBe(1);
      expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED' });
    });
  });
}

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';

type PrismaTx = Parameters<Parameters<TestDatabase['prisma']['$transaction']>[0]>[0];

describeAdapter<PrismaTx>('Prisma', {
  open: (db) => ({ adapter: prismaTransactions(db.prisma), close: async () => undefined }),
  write: async (tx, receiptId, note) => void (await tx.$executeRawUnsafe(INSERT, receiptId, note)),
  expectOwn: (tx) => expect(typeof tx.$executeRaw).toBe('function'),
  end: async (tx, command) => void (await tx.$executeRawUnsafe(command)),
});

describeAdapter<PrismaTx>('Prisma, with ferry’s statements prepared (ferryStatementNames)', {
  open: (db) => ({
    adapter: prismaTransactions(db.newClient({ max: 4 }, { statementNameGenerator: ferryStatementNames })),
    close: async () => undefined,
  }),
  write: async (tx, receiptId, note) => void (await tx.$executeRawUnsafe(INSERT, receiptId, note)),
  expectOwn: (tx) => expect(typeof tx.$executeRaw).toBe('function'),
  end: async (tx, command) => void (await tx.$executeRawUnsafe(command)),
});

let ownPool: Pool | undefined;
describeAdapter<PrismaTx>('Prisma, with ferry’s own statements on node-postgres', {
  open: (db) => {
    ownPool = listened(new Pool({ connectionString: db.url, max: 2 }));
    const pool = ownPool;
    return { adapter: prismaTransactions(db.prisma, { db: fromPg(pool) }), close: () => pool.end() };
  },
  write: async (tx, receiptId, note) => void (await tx.$executeRawUnsafe(INSERT, receiptId, note)),
  // Acceptance and claims ran on the pool (the handler on Prisma, as the other checks show).
  expectOwn: (tx) => {
    expect(typeof tx.$executeRaw).toBe('function');
    expect(ownPool?.totalCount).toBeGreaterThan(0);
  },
  end: async (tx, command) => void (await tx.$executeRawUnsafe(command)),
});

describeAdapter('node-postgres', {
  open: (db) => {
    const pool = listened(new Pool({ connectionString: db.url, max: 4 }));
    return { adapter: pgTransactions(pool), close: () => pool.end() };
  },
  write: async (client, receiptId, note) => void (await client.query(INSERT, [receiptId, note])),
  expectOwn: (client) => {
    expect(typeof client.release).toBe('function');
    expect(client.getTransactionStatus()).toBe('T');
  },
  end: async (client, command) => void (await client.query(command)),
});

describeAdapter('Kysely', {
  open: (db) => {
    const kysely = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: db.url, max: 4 })) }),
    });
    return { adapter: kyselyTransactions(kysely), close: () => kysely.destroy() };
  },
  write: async (trx, receiptId, note) =>
    void (await trx.insertInto('business_rows').values({ receipt_id: receiptId, note }).execute()),
  expectOwn: (trx) => expect(trx.isTransaction).toBe(true),
  end: async (trx, command) => void (await sql.raw(command).execute(trx)),
});
