/**
 * The record's numbering of the requeue history (requeueHistory in sql/fragments.ts: the last
 * entry whose `sequence` is a safe integer from 1) and requeue's (requeueDead's SQL) must agree,
 * or a requeue renumbers the history it keeps. Requeue counted only a sequence written as 1 to 15
 * digits: a hand-set sequence of 4.0 (jsonb keeps the scale; the record reads 4) or of 10^15 (16
 * digits, within 2^53-1) was read by get() as that number, then requeue numbered its new entry
 * from the history's length: the entry get() called 4 became 1 and the new one 2.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { requeueHandSetHistory } from './inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it.each([
  ['a whole sequence written with a fraction', '[{"sequence": 4.0}]', 4],
  ['a whole sequence written with an exponent and a fraction', '[{"sequence": 4.00e0}]', 4],
  ['a 16-digit sequence within 2^53-1', '[{"sequence": 1000000000000000}]', 1e15],
  ['the largest safe integer less one', '[{"sequence": 9007199254740990}]', 9007199254740990],
  ['a later entry without a number', '[{"sequence": 7.0}, {"sequence": "x"}]', 8],
])('requeue numbers on from the sequence get() reads: %s (%s)', async (_, history, read) => {
  const { before, requeued } = await requeueHandSetHistory(t, history);
  expect(before.requeueHistory.at(-1)!.sequence).toBe(read);
  // The entries kept keep the numbers get() gave them; the new one is numbered one past them.
  expect(requeued.requeueHistory.map((entry) => entry.sequence)).toEqual([
    ...before.requeueHistory.map((entry) => entry.sequence),
    read + 1,
  ]);
  expect(requeued.requeueHistoryDropped).toBe(before.requeueHistoryDropped);
});
