/**
 * The connection of a Prisma handler transaction dies while the handler waits (PostgreSQL ends
 * the backend): on `prismaTransactions(prisma)` and with ferry's own statements on node-postgres
 * (`{ db: fromPg(pool) }`). The handler's writes and the completion go together: nothing is
 * written, the receipt is retried, and the next attempt completes on a fresh connection.
 */
import { Pool } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { fromPg, fromPrisma, prismaTransactions, type TransactionAdapter } from '@ferry/core';
import type { PrismaTransactionLike } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import {
  businessCount,
  createBusinessTable,
  insertBusiness,
  latch,
  makeInbox,
  message,
  waitFor,
} from './helpers';

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

const adapters: Array<[string, () => TransactionAdapter<PrismaTransactionLike>]> = [
  ['prismaTransactions(prisma)', () => prismaTransactions(t.newClient({ max: 3 }))],
  [
    'prismaTransactions(prisma, { db: fromPg(pool) })',
    () => prismaTransactions(t.newClient({ max: 3 }), { db: fromPg(pool) }),
  ],
];

describe.each(adapters)('a Prisma handler transaction whose backend is ended (%s)', (_name, adapter) => {
  it('is retried with nothing written, and the next attempt completes', async () => {
    const consumer = `killed-${Math.random().toString(36).slice(2)}`;
    const gate = latch();
    let backend: number | undefined;
    const inbox = makeInbox(adapter(), {
      handlers: {
        [consumer]: async (_payload, context) => {
          await insertBusiness(context, `attempt ${context.attempt}`);
          if (context.attempt > 1) return;
          const [row] = await fromPrisma(context.tx).query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          backend = row?.pid;
          await gate.promise;
          await insertBusiness(context, 'after the kill');
        },
      },
    });
    try {
      const { record } = await inbox.accept(message({ consumer }));
      let first: unknown;
      const settled = inbox.runOnce().then(
        (result) => (first = result),
        (error: unknown) => (first = error),
      );
      const pid = await waitFor('the handler to start', async () => backend);
      await t.db.query('SELECT pg_terminate_backend($1::int)', [pid]);
      gate.open();
      await waitFor('runOnce to settle', async () => first !== undefined);
      await settled;
      expect(first).toMatchObject({ claimed: 1, completed: 0, retried: 1 });
      expect(await businessCount(t, record.id)).toBe(0);
      expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
      const notes = await t.db.query<{ note: string }>(
        'SELECT note FROM business_rows WHERE receipt_id = $1::uuid',
        [record.id],
      );
      expect(notes).toEqual([{ note: 'attempt 2' }]);
    } finally {
      gate.open();
      await inbox.close();
    }
  }, 60_000);
});
