/**
 * An expired claim (a crashed worker's) is judged by the budget of the worker that finds it, not
 * by the one written when it was accepted or last claimed: taken again while its attempts are
 * below that worker's maxAttempts, swept DEAD once they reach it (review 83).
 */
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { claimReceipts } from '../../src/inbox/sql/claim';
import { makeInbox, message, receiptRow, waitFor } from './helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

/** A receipt claimed under budget `claimedWith`, by a worker that then crashed (its lease expired). */
async function crashedClaim(claimedWith: number): Promise<{ consumer: string; id: string }> {
  const consumer = `c-${randomUUID()}`;
  const { record } = await makeInbox(t.prisma).accept(message({ consumer }));
  await claimReceipts(t.db, [consumer], 1, 1, claimedWith);
  await waitFor('the crashed claim to expire', async () => {
    const [row] = await t.db.query<{ expired: boolean }>(
      'SELECT lease_expires_at <= now() AS expired FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [record.id],
    );
    return row?.expired === true;
  });
  return { consumer, id: record.id };
}

it('a worker with a larger maxAttempts runs an expired claim whose old budget was spent', async () => {
  const { consumer, id } = await crashedClaim(1);
  let runs = 0;
  const worker = makeInbox(t.prisma, {
    worker: { maxAttempts: 3 },
    handlers: { [consumer]: async () => void (runs += 1) },
  });
  await worker.runOnce();
  const row = await receiptRow(t, id);
  expect({ runs, status: row.status, attempts: row.attempts, max: row.max_attempts }).toEqual({
    runs: 1,
    status: 'COMPLETED',
    attempts: 2,
    max: 3,
  });
});

it('a worker with a smaller maxAttempts sweeps an expired claim that spent it DEAD, without running it', async () => {
  const { consumer, id } = await crashedClaim(8);
  let runs = 0;
  const worker = makeInbox(t.prisma, {
    worker: { maxAttempts: 1 },
    handlers: { [consumer]: async () => void (runs += 1) },
  });
  await worker.runOnce();
  const row = await receiptRow(t, id);
  expect({ runs, status: row.status }).toEqual({ runs: 0, status: 'DEAD' });
});
