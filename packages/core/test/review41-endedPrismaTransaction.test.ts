/**
 * Review 41: emit on the application's own Prisma transaction after it ended, beyond the one case
 * 16e9718 covered (CHANGELOG "Fixed": "an application's own committed Kysely or Prisma transaction
 * given to `emit` is FERRY_VALIDATION_FAILED, not retriable, as an ended pg client is").
 *
 * The fix recognises an ended transaction by Prisma's message (src/sql/dbErrors.ts,
 * ENDED_TRANSACTION: `cannot be executed on a (?:committed|rolled back) transaction`), ahead of
 * P2028's retriable FERRY_TIMEOUT. Prisma 7's client (the one ferry tests with) words the other
 * two ends differently, and both stay a retriable FERRY_TIMEOUT, which tells a caller's retry loop
 * to go round again on a transaction that can never run anything:
 *
 * 1. Rolled back: "Transaction already closed: A query cannot be executed on a transaction that
 *    was rolled back." (not "on a rolled back transaction"). The typical path: an emit not awaited
 *    inside `$transaction`, whose callback then throws, so the INSERT reaches a rolled-back tx.
 * 2. Committed, once Prisma forgot it: Prisma keeps only the last 100 closed transactions
 *    (TransactionManager.closedTransactions); past them a kept tx answers "Transaction not found.
 *    Transaction ID is invalid, refers to an old closed transaction ..." (P2028). In a service
 *    doing anything, a kept committed tx is used after more than 100 other transactions: the
 *    committed case the fix names is retriable again.
 *
 * Fix direction: match Prisma's closed-transaction texts as a family ("Transaction already
 * closed", "Transaction not found") or, better, keep a WeakSet of the application's transactions
 * seen ended, as endedTransactions.ts does for handler transactions; P2028 alone stays FERRY_TIMEOUT
 * only for "Unable to start a transaction in the given time" and the expired transaction.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { emit, type ApplicationTransaction } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

interface Outcome {
  code: unknown;
  retriable: unknown;
}

async function outcomeOf(work: Promise<unknown>): Promise<Outcome | 'resolved'> {
  return work.then(
    () => 'resolved' as const,
    (error: { code?: unknown; retriable?: unknown }) => ({ code: error.code, retriable: error.retriable }),
  );
}

async function storedEvents(run: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'run' = $1`,
    [run],
  );
  return row?.n ?? -1;
}

describe('review41: emit on the application’s own Prisma transaction after it ended', () => {
  it('rolled back: refused as an ended client is (not retriable), nothing stored', async () => {
    let kept: unknown;
    await t.prisma
      .$transaction(async (tx) => {
        kept = tx;
        throw new Error('the application’s transaction fails');
      })
      .catch(() => undefined);
    const outcome = await outcomeOf(
      emit(kept as ApplicationTransaction, { type: 'late.emit', payload: { run: 'rolled-back' } }),
    );
    expect(outcome).toEqual({ code: 'FERRY_VALIDATION_FAILED', retriable: false });
    expect(await storedEvents('rolled-back')).toBe(0);
  });

  it('committed, then 100 other transactions: still refused as ended (not retriable), nothing stored', async () => {
    let kept: unknown;
    await t.prisma.$transaction(async (tx) => {
      kept = tx;
    });
    // The service goes on: other transactions of the same client (Prisma keeps 100 closed ones).
    for (let i = 0; i < 101; i += 1) await t.prisma.$transaction(async () => undefined);
    await sleep(10);
    const outcome = await outcomeOf(
      emit(kept as ApplicationTransaction, { type: 'late.emit', payload: { run: 'committed-forgotten' } }),
    );
    expect(outcome).toEqual({ code: 'FERRY_VALIDATION_FAILED', retriable: false });
    expect(await storedEvents('committed-forgotten')).toBe(0);
  });
});
