/**
 * Review 40 (failed first): emit given a transaction that has already ended, on each adapter.
 *
 * 1. node-postgres: a handler that keeps `context.tx` (a repository holding its client, a promise
 *    awaited late) and emits on it after its transaction ended gets FERRY_TRANSACTION_MISUSE, as
 *    documented, but the call also leaves unhandled promise rejections behind, which end a Node
 *    process running with the default `--unhandled-rejections=throw`. emit tells a pg client apart
 *    by calling `getTransactionStatus()` (fromPgClient: refuseUnsettled, then again for `bind`);
 *    on the lent client (src/sql/lentClient.ts) every method read after the transaction ended is
 *    `refuseLater`, which answers a call without a callback with a rejected promise, so each of
 *    those status reads creates a rejected promise nobody ever awaits. One late emit in one
 *    handler then crashes the whole service and every message in flight with it.
 *
 * 2. Kysely and Prisma: the same late emit on a handler's `context.tx` is not the documented
 *    FERRY_TRANSACTION_MISUSE ("a handler ... kept using ferry's handler transaction", README
 *    Errors) but a retriable error: Kysely's "Transaction is already committed" becomes
 *    FERRY_DATABASE_ERROR (retriable, and logged as an "unclassified database error" though no
 *    statement reached PostgreSQL), Prisma's P2028 becomes FERRY_TIMEOUT (retriable). The same
 *    programming error answers three codes on three adapters, two of which tell the caller to try
 *    again on a transaction that can never run anything again. The same holds for the
 *    application's own Kysely or Prisma transaction once it has committed: ferry already refuses
 *    an ended node-postgres client or pool with a non-retriable FERRY_VALIDATION_FAILED on `tx`
 *    (test/outbox/closedClientEmit.test.ts: "a caller's retry loop would spin"), not so an ended
 *    Kysely `Transaction` or Prisma transaction client.
 *
 * Fix direction: on the lent client, answer the status read itself (or any call) without creating
 * a promise, or read the status from the target; recognise an ended Kysely transaction (its
 * "already committed / rolled back" refusal, or `isCommitted`/`isRolledBack` where present) and
 * Prisma's closed transaction ("Transaction already closed", P2028 on a committed transaction) and
 * refuse them as misuse, not retriable (FERRY_TRANSACTION_MISUSE for a handler's tx, which ferry can
 * recognise as one it handed out).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import {
  emit,
  pgTransactions,
  prismaTransactions,
  type ApplicationTransaction,
  type TransactionAdapter,
} from '@ferry/core';
import { kyselyTransactions } from '@ferry/core/kysely';
import { failOnUnhandledRejections } from '../../../test-support/lifecycle';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { makeInbox, message } from './inbox/helpers';

failOnUnhandledRejections();

let t: TestDatabase;
let pool: Pool;
let kysely: Kysely<Record<string, never>>;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 4 }));
  kysely = new Kysely({
    dialect: new PostgresDialect({ pool: listened(new Pool({ connectionString: t.url, max: 4 })) }),
  });
});
afterAll(async () => {
  await pool.end();
  await kysely.destroy();
  await t.drop();
});

interface Outcome {
  code: unknown;
  retriable: unknown;
}

async function outcomeOf(work: Promise<unknown>): Promise<Outcome | 'resolved'> {
  const outcome = await work.then(
    () => 'resolved' as const,
    (error: { code?: unknown; retriable?: unknown }) => ({ code: error.code, retriable: error.retriable }),
  );
  // Let an unhandled rejection of the call surface before the test ends.
  await sleep(50);
  return outcome;
}

async function storedEvents(run: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'run' = $1`,
    [run],
  );
  return row?.n ?? -1;
}

const adapters: [string, () => TransactionAdapter<unknown>][] = [
  ['node-postgres', () => pgTransactions(pool) as TransactionAdapter<unknown>],
  ['Kysely', () => kyselyTransactions(kysely) as TransactionAdapter<unknown>],
  ['Prisma', () => prismaTransactions(t.prisma) as TransactionAdapter<unknown>],
];

describe('review40: emit on a handler transaction the handler kept after it ended', () => {
  it.each(adapters)(
    '%s: refused with FERRY_TRANSACTION_MISUSE (not retriable), nothing stored, no unhandled rejection',
    async (name, adapter) => {
      const consumer = `late-${name}`;
      let kept: unknown;
      const inbox = makeInbox(adapter(), {
        handlers: {
          [consumer]: async (_payload, context) => {
            kept = context.tx;
          },
        },
      });
      await inbox.accept(message({ consumer }));
      expect(await inbox.runOnce()).toMatchObject({ completed: 1 });
      const run = `late-${name}`;
      const outcome = await outcomeOf(
        emit(kept as ApplicationTransaction, { type: 'late.emit', payload: { run } }),
      );
      expect(outcome).toEqual({ code: 'FERRY_TRANSACTION_MISUSE', retriable: false });
      expect(await storedEvents(run)).toBe(0);
    },
  );
});

describe('review40: emit on the application’s own transaction after it committed', () => {
  it('Kysely: refused as an ended client is (not retriable), nothing stored', async () => {
    let kept: unknown;
    await kysely.transaction().execute(async (trx) => {
      kept = trx;
    });
    const outcome = await outcomeOf(
      emit(kept as ApplicationTransaction, { type: 'late.emit', payload: { run: 'own-kysely' } }),
    );
    expect(outcome).toEqual({ code: 'FERRY_VALIDATION_FAILED', retriable: false });
    expect(await storedEvents('own-kysely')).toBe(0);
  });

  it('Prisma: refused as an ended client is (not retriable), nothing stored', async () => {
    let kept: unknown;
    await t.prisma.$transaction(async (tx) => {
      kept = tx;
    });
    const outcome = await outcomeOf(
      emit(kept as ApplicationTransaction, { type: 'late.emit', payload: { run: 'own-prisma' } }),
    );
    expect(outcome).toEqual({ code: 'FERRY_VALIDATION_FAILED', retriable: false });
    expect(await storedEvents('own-prisma')).toBe(0);
  });
});
