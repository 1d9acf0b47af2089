/**
 * What the handler transaction sends to PostgreSQL, statement by statement, on every adapter:
 * BEGIN (node-postgres sends the transaction's limits with it; Kysely in a statement of their
 * own), the claim check, the handler's own write, the fenced completion, COMMIT. Each statement is a round trip per message, the worker's
 * throughput on a busy inbox.
 */
import { PrismaPg } from '@prisma/adapter-pg';
import { Kysely, PostgresDialect, type Generated } from 'kysely';
import type { PoolClient } from 'pg';
import { pgTransactions, prismaTransactions, type TransactionAdapter } from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { PrismaClient } from '../../../../generated/prisma/client';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { createBusinessTable, makeInbox, message, recordingPool } from './helpers';

interface Database {
  business_rows: { id: Generated<string>; receipt_id: string; note: string | null };
}

type PrismaTx = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

const INSERT = 'INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, $2)';
const WORKER = { transactionTimeoutMs: 7_000, lockTimeoutMs: 900 } as const;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
});
afterAll(async () => {
  await t.drop();
});

/** The statements of the transaction that ran the handler's write, from BEGIN to COMMIT. */
function handlerTransaction(statements: Map<PoolClient, string[]>): string[] {
  for (const sent of statements.values()) {
    const write = sent.findIndex((text) => /^insert into "?business_rows/i.test(text));
    if (write < 0) continue;
    const begin = sent.findLastIndex((text, i) => i < write && /^begin/i.test(text));
    const commit = sent.findIndex((text, i) => i > write && /^commit$/i.test(text));
    return sent.slice(begin, commit + 1);
  }
  throw new Error('no connection ran the handler');
}

/** Runs one receipt whose handler writes a row with `write` and reads its transaction's settings. */
async function runOne<TTx>(
  adapter: TransactionAdapter<TTx>,
  consumer: string,
  write: (tx: TTx, receiptId: string) => Promise<void>,
  settings: (tx: TTx) => Promise<Record<string, string>>,
): Promise<Record<string, string>> {
  let seen: Record<string, string> = {};
  const inbox = makeInbox(adapter, {
    worker: WORKER,
    handlers: {
      [consumer]: async (_payload, context) => {
        seen = await settings(context.tx);
        await write(context.tx, context.receiptId);
      },
    },
  });
  await inbox.accept(message({ consumer }));
  expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
  return seen;
}

const SETTINGS = `SELECT current_setting('lock_timeout') AS lock,
  current_setting('statement_timeout') AS statement,
  current_setting('idle_in_transaction_session_timeout') AS idle`;

/** BEGIN, claim check, the handler's read of its settings and its write, completion, COMMIT. */
function expectFiveRoundTrips(sent: string[], begin: string | RegExp = 'BEGIN'): void {
  expect(sent).toHaveLength(6);
  expect(sent[0]).toMatch(begin);
  expect(sent[1]).toMatch(/set_config\('lock_timeout'.*set_config\('statement_timeout'.*EXISTS/);
  expect(sent[2]).toBe(SETTINGS.replace(/\s+/g, ' '));
  expect(sent[3]).toBe(INSERT);
  expect(sent[4]).toMatch(/^WITH inside AS .*'COMPLETED'/);
  expect(sent[5]).toBe('COMMIT');
}

describe('the handler transaction, statement by statement', () => {
  it('node-postgres: BEGIN carries the time limits, no statement of their own', async () => {
    const { pool, statements } = recordingPool(t);
    try {
      const seen = await runOne(
        pgTransactions(pool),
        'statements-pg',
        async (client, id) => void (await client.query(INSERT, [id, 'pg'])),
        async (client) => (await client.query<Record<string, string>>(SETTINGS)).rows[0] ?? {},
      );
      expect(seen).toEqual({ lock: '900ms', statement: '7s', idle: '7s' });
      expectFiveRoundTrips(
        handlerTransaction(statements),
        /^BEGIN; SELECT set_config\('statement_timeout', '7000ms', true\).*idle_in_transaction_session_timeout/,
      );
    } finally {
      await pool.end();
    }
  });

  it('Kysely: the time limits in a statement after BEGIN, before the claim check', async () => {
    const { pool, statements } = recordingPool(t);
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      const seen = await runOne(
        kyselyTransactions(kysely),
        'statements-kysely',
        async (trx, id) =>
          void (await trx.insertInto('business_rows').values({ receipt_id: id, note: 'k' }).execute()),
        async (trx) => {
          const { sql } = await import('kysely');
          return (await sql.raw<Record<string, string>>(SETTINGS).execute(trx)).rows[0] ?? {};
        },
      );
      expect(seen).toEqual({ lock: '900ms', statement: '7s', idle: '7s' });
      const sent = handlerTransaction(statements);
      expect(sent).toHaveLength(7);
      expect(sent[1]).toMatch(/^SELECT set_config\('statement_timeout', \$1, true\)/);
      expect(sent[2]).toMatch(/set_config\('lock_timeout'.*EXISTS/);
      expect(sent[5]).toMatch(/^WITH inside AS .*'COMPLETED'/);
    } finally {
      await kysely.destroy();
    }
  });

  it('Prisma: its own timeout, statement_timeout from the claim check on, and the same five round trips', async () => {
    const { pool, statements } = recordingPool(t);
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    try {
      const seen = await runOne<PrismaTx>(
        prismaTransactions(prisma),
        'statements-prisma',
        async (tx, id) => void (await tx.$executeRawUnsafe(INSERT, id, 'prisma')),
        async (tx) => (await tx.$queryRawUnsafe<Record<string, string>[]>(SETTINGS))[0] ?? {},
      );
      // Its own timeout for the transaction; statement_timeout from the claim check on.
      expect(seen).toMatchObject({ lock: '900ms', statement: '7s' });
      expectFiveRoundTrips(handlerTransaction(statements));
    } finally {
      await prisma.$disconnect();
      await pool.end();
    }
  });
});
