/**
 * requeue_history is a jsonb column an operator or a migration can set by hand. Requeue numbered
 * its new entry from the last entry's `sequence` with a cast to bigint, and read the column as an
 * array: a sequence of 1e30 (out of bigint's range) failed every requeue of that receipt with a
 * cast error (22003), a history that is not an array (an object, a string, JSON null) failed it
 * with "cannot extract elements from an object/scalar" (22023), and a sequence of 1.5 or -5 gave
 * numbers that are not a count. The receipt stayed DEAD: the operator could not requeue it.
 * Requeue now numbers from a last sequence that is a whole number within 2^53-1 (else from the
 * history's length) and reads a history that is not an array as empty; get() reads them too.
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { receiptRow, requeueHandSetHistory } from './helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it.each([
  ['a sequence beyond bigint', '[{"sequence": 1e30}]', 2],
  ['a fractional sequence', '[{"sequence": 1.5}]', 2],
  ['a negative sequence', '[{"sequence": -5}]', 2],
  ['a sequence beyond 2^53-1', '[{"sequence": 9007199254740993}]', 2],
  ['entries that are not objects', '[1, "x", null, [2]]', 5],
  ['an object, not an array', '{"sequence": 4}', 1],
  ['a string', '"history"', 1],
  ['JSON null', 'null', 1],
])('requeues a receipt whose hand-set history holds %s (%s)', async (_, history, sequence) => {
  const { id, requeued } = await requeueHandSetHistory(t, history);
  expect(requeued.status).toBe('PENDING');
  const last = requeued.requeueHistory.at(-1)!;
  expect([last.actor, last.reason, last.sequence]).toEqual(['op', 'hand-edited history', sequence]);
  const stored = await receiptRow(t, id);
  expect(Array.isArray(stored.requeue_history)).toBe(true);
});
