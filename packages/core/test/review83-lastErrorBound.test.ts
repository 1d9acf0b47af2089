/**
 * Review 83: docs/inbox.md documents `last_error` as "redacted, ≤ 2000 chars" (describeError cuts
 * every stored error text to MAX_STORED_ERROR_CHARS). The expired-claim sweep that makes an
 * abandoned claim DEAD does not go through that bound: sql/exhaustExpired.ts appends
 * ` | attempts exhausted: the last claim expired without completing` to whatever last_error holds.
 * After a failure whose text filled the 2,000 characters, a crash on the last attempt leaves a
 * last_error of 2,064 characters; and since requeue keeps last_error, every
 * requeue-then-crash cycle appends again, without bound.
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { latch, makeInbox, message, receiptRow, waitFor } from './inbox/helpers';

jest.setTimeout(60_000);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

// A lease of 1 s (not 300 ms): in a loaded CI run the last attempt did not start within jest's 60 s
// (not traced; a handler transaction that cannot begin within its lease now has its claim given
// back uncharged and claimed again, so a lease shorter than the machine's latency can repeat).
const TIMING = { maxAttempts: 2, leaseMs: 1_000, heartbeatIntervalMs: 200, retryBaseMs: 1, retryMaxMs: 1 };

it('last_error stays within 2,000 characters when the expired-claim sweep makes a receipt DEAD', async () => {
  const hang = latch();
  let runs = 0;
  const crashing = makeInbox(t.prisma, {
    worker: { ...TIMING, shutdownTimeoutMs: 0 },
    handlers: {
      orders: async () => {
        runs += 1;
        // First attempt: an ordinary failure with a long text (stored cut to 2,000 characters).
        if (runs === 1) throw new Error(`downstream refused the order: ${'detail '.repeat(1_000)}`);
        // Second (last) attempt: the process "crashes" (close() abandons the claim to its lease).
        await hang.promise;
      },
    },
  });
  const { record } = await crashing.accept(message());
  await crashing.runOnce();
  expect(String((await receiptRow(t, record.id)).last_error).length).toBeLessThanOrEqual(2_000);

  await waitFor('the retry to be due', async () => {
    const [row] = await t.db.query<{ due: boolean }>(
      'SELECT next_attempt_at <= now() AS due FROM ferry_inbox_receipts WHERE id = $1::uuid',
      [record.id],
    );
    return row?.due === true;
  });
  const abandoned = crashing.runOnce();
  // 60 s: a loaded CI run's claim and handler start took past the default 15 s once.
  await waitFor('the last attempt to start', async () => runs === 2, 60_000);
  await crashing.close();
  await abandoned;

  // Another worker finds the expired claim with no attempt left and sweeps it to DEAD.
  const survivor = makeInbox(t.prisma, { worker: TIMING, handlers: { orders: async () => undefined } });
  await waitFor('the abandoned claim to be swept DEAD', async () => {
    await survivor.runOnce();
    return (await receiptRow(t, record.id)).status === 'DEAD';
  });
  hang.open();
  const lastError = String((await receiptRow(t, record.id)).last_error);
  // Received: 2,064 characters (the 2,000 stored, then " | attempts exhausted: ...").
  expect(lastError.length).toBeLessThanOrEqual(2_000);
  // Its own bound above the 60 s wait for the last attempt, so that wait reports what it saw.
}, 120_000);
