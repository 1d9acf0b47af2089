/**
 * Each requeue appended an entry of up to ~4 KB (actor and reason up to 1,000 characters each, the
 * last error up to 2,000) to the receipt's requeue_history, without bound: an operator script
 * requeueing one poison receipt in a loop grew that one row, and every admin get() and list()
 * carrying it, for ever. The history keeps the last INBOX_REQUEUE_HISTORY_LIMIT (10) entries, each
 * numbered (`sequence`, from 1), and the record says how many older ones were dropped
 * (`requeueHistoryDropped`); a row that grew before this is cut down by its next requeue.
 */
import { randomUUID } from 'node:crypto';
import { INBOX_REQUEUE_HISTORY_LIMIT, InboxAdmin, type InboxRecord } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { deadReceipt } from './helpers';

/** The entries a history keeps (INBOX_REQUEUE_HISTORY_LIMIT). */
const KEPT = 10;

/** Read as the record's fields, whichever version of its type (the test predates them). */
const sequences = (record: InboxRecord): unknown[] =>
  record.requeueHistory.map((entry) => (entry as { sequence?: unknown }).sequence);
const dropped = (record: InboxRecord | null): unknown =>
  (record as { requeueHistoryDropped?: unknown } | null)?.requeueHistoryDropped;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** The receipt DEAD again, as its handler failing once more leaves it, with a long last error. */
async function deadAgain(id: string): Promise<void> {
  await t.db.query(
    `UPDATE ferry_inbox_receipts SET status = 'DEAD', dead_at = now(), attempts = 1, last_error = $2,
       row_version = row_version + 1 WHERE id = $1::uuid`,
    [id, 'e'.repeat(2_000)],
  );
}

it('keeps the last entries of a receipt requeued in a loop, numbered, and counts the dropped ones', async () => {
  const tenantId = `t-${randomUUID()}`;
  const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
  const dead = await deadReceipt(t, tenantId);
  const requeues = 3 * KEPT + 5;
  let record = dead;
  for (let n = 1; n <= requeues; n += 1) {
    record = await admin.requeue({
      id: dead.id,
      expectedVersion: record.rowVersion,
      actor: `op-${n}-${'a'.repeat(900)}`,
      reason: `attempt ${n} ${'r'.repeat(900)}`,
    });
    if (n < requeues) {
      await deadAgain(dead.id);
      record = (await admin.get(dead.id))!;
    }
  }
  expect(record.requeueHistory).toHaveLength(KEPT);
  expect(sequences(record)).toEqual(Array.from({ length: KEPT }, (_, i) => requeues - KEPT + 1 + i));
  expect(record.requeueHistory.map((entry) => entry.reason.split(' ')[1])).toEqual(
    Array.from({ length: KEPT }, (_, i) => String(requeues - KEPT + 1 + i)),
  );
  expect(dropped(record)).toBe(requeues - KEPT);
  expect(dropped(await admin.get(dead.id))).toBe(requeues - KEPT);
  expect((await admin.list({ status: 'PENDING' })).records[0]).toMatchObject({
    requeueHistoryDropped: requeues - KEPT,
  });
  const [size] = await t.db.query<{ n: number }>(
    `SELECT jsonb_array_length(requeue_history) AS n
       FROM ferry_inbox_receipts WHERE id = $1::uuid`,
    [dead.id],
  );
  expect(size?.n).toBe(KEPT);
  expect(INBOX_REQUEUE_HISTORY_LIMIT).toBe(KEPT);
});

it('cuts a history that grew before the bound at its next requeue, counting its unnumbered entries', async () => {
  const tenantId = `t-${randomUUID()}`;
  const admin = new InboxAdmin(t.prisma).forTenant(tenantId);
  const dead = await deadReceipt(t, tenantId);
  const old = Array.from({ length: KEPT + 5 }, (_, i) => ({
    at: new Date().toISOString(),
    actor: 'op',
    reason: `old ${i + 1}`,
    fromVersion: 1,
    attemptsInCycle: 1,
    lastError: null,
  }));
  await t.db.query(`UPDATE ferry_inbox_receipts SET requeue_history = $2::jsonb WHERE id = $1::uuid`, [
    dead.id,
    JSON.stringify(old),
  ]);
  const before = (await admin.get(dead.id))!;
  expect(before.requeueHistory).toHaveLength(KEPT + 5);
  expect(dropped(before)).toBe(0);
  const record = await admin.requeue({
    id: dead.id,
    expectedVersion: before.rowVersion,
    actor: 'op',
    reason: 'new',
  });
  expect(record.requeueHistory).toHaveLength(KEPT);
  expect(record.requeueHistory.map((entry) => entry.reason)).toEqual([
    ...old.slice(old.length - KEPT + 1).map((entry) => entry.reason),
    'new',
  ]);
  expect(sequences(record)[KEPT - 1]).toBe(KEPT + 6);
  expect(dropped(record)).toBe(6);
});
