import { fromPrisma, Inbox, type InboxHandlerContext } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { message, quietLogger, receiptRow } from './inbox/helpers';

/**
 * Review 117 (spec/002, the options table): the defaults in force in a worker built with no
 * worker options, read where PostgreSQL holds them: the claim's lease (leaseMs 30000), the
 * handler transaction's lock_timeout (lockTimeoutMs 1000), the cycle budget (maxAttempts 8),
 * and the attempt a claim consumes before the handler runs.
 */
let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('a worker with no options claims with the documented defaults', async () => {
  const seen: Array<{ context: InboxHandlerContext; lock: string; leaseLeftMs: number; attempts: number }> =
    [];
  const inbox = new Inbox(t.prisma, {
    logger: quietLogger,
    handlers: {
      orders: async (_p, context) => {
        const db = fromPrisma(context.tx);
        const [row] = await db.query<{ lock: string; left_ms: number; attempts: number }>(
          `SELECT current_setting('lock_timeout') AS lock, attempts,
             (extract(epoch FROM lease_expires_at - clock_timestamp()) * 1000)::int AS left_ms
           FROM ferry_inbox_receipts WHERE id = $1::uuid`,
          [context.receiptId],
        );
        seen.push({ context, lock: row!.lock, leaseLeftMs: row!.left_ms, attempts: row!.attempts });
      },
    },
  });
  try {
    await inbox.initialize(); // worker.enabled defaults to false: nothing polls
    expect(inbox.state).toBe('idle');
    const { record } = await inbox.accept(message({ consumer: 'orders' }));
    expect(await inbox.runOnce()).toMatchObject({ claimed: 1, completed: 1 });
    expect(seen).toHaveLength(1);
    const [{ context, lock, leaseLeftMs, attempts }] = seen as [(typeof seen)[0]];
    expect(lock).toBe('1s');
    expect(leaseLeftMs).toBeGreaterThan(20_000);
    expect(leaseLeftMs).toBeLessThanOrEqual(30_000);
    expect({ attempt: context.attempt, maxAttempts: context.maxAttempts, attempts }).toEqual({
      attempt: 1,
      maxAttempts: 8,
      attempts: 1,
    });
    expect(await receiptRow(t, record.id)).toMatchObject({ status: 'COMPLETED', max_attempts: 8 });
  } finally {
    await inbox.close();
  }
});
