/**
 * Review 90 (failed first): a handler that runs work in parallel on its transaction
 * (`Promise.all`), one branch failing while another is between two statements.
 *
 * User: `await Promise.all([checkStock(tx), recordOrder(tx)])`, where recordOrder reads, then
 * writes, and checkStock throws. Promise.all rejects at the first failure, so the handler throws
 * while recordOrder still runs: its read is on the connection, its write comes once the read
 * answers. Contract (README, Transactions): the handler's writes and the completion commit or roll
 * back together; a thrown handler rolls back everything it wrote, and the receipt is retried.
 *
 * Instead, on Kysely: Kysely sends its ROLLBACK on the connection as soon as the callback rejects,
 * outside the Transaction's own queue of statements, and marks the Transaction rolled back only
 * once the ROLLBACK has answered. recordOrder's write, sent when its read answered (while the
 * ROLLBACK was in flight), passes the Transaction's check and is queued by node-postgres after the
 * ROLLBACK: it runs outside any transaction and commits on its own. The receipt is retried, and
 * each attempt leaves one more committed row of a handler that never succeeded. kysely.ts already
 * holds the connection against exactly this when ferry abandons a transaction, not when the work
 * itself ends. node-postgres (the lent client is refused before ferry's ROLLBACK is sent) and
 * Prisma (its transaction refuses statements once closing) keep the write out.
 *
 * Review 90 (failed first), the second test here: a handler that emits in parallel on its transaction.
 *
 * User: a handler that writes its row and emits its events side by side, `await Promise.all([
 * tx.query(INSERT, ...), emit(tx, orderPlaced), emit(tx, stockReserved)])`, as it would on any
 * client. Contract (README, Transactions): emit takes the handler's `context.tx` on every adapter,
 * and the events commit with the handler's writes and the receipt's completion. On Kysely and
 * Prisma they do.
 *
 * Instead, on pgTransactions: emit refuses the handler's client with FERRY_VALIDATION_FAILED ("a
 * node-postgres client with 1 statement(s) not yet answered ... ferry cannot tell whether the
 * client is in a transaction"), every attempt of the receipt, until it is DEAD. That refusal is
 * for the application's own client, whose BEGIN may not have been answered; the PoolClient a
 * handler gets is ferry's, lent inside ferry's BEGIN, so ferry knows where it stands: in its
 * transaction until the handler returns (after which it refuses every use anyway).
 */
import { emit, type ApplicationTransaction } from '@ferry/core';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { ADAPTER_SUBJECTS, consumerOf, type AdapterSubject } from './inbox/adapterSubjects';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow } from './inbox/helpers';

describe('review90: a handler that runs work in parallel on its transaction', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await createBusinessTable(t);
  });
  afterAll(async () => {
    await t.drop();
  });

  describe.each(ADAPTER_SUBJECTS)('on %s', (name, factory) => {
    const consumer = consumerOf(name);
    let subject: AdapterSubject<unknown>;
    beforeAll(() => {
      subject = factory(t, 3);
    });
    afterAll(async () => {
      await subject.end();
    });

    it('rolls back every write of the failed attempt: the branch that went on writes nothing', async () => {
      const branches: Array<Promise<unknown>> = [];
      const inbox = makeInbox(subject.adapter, {
        handlers: {
          [consumer]: async (_payload, { tx, receiptId }) => {
            // A read that takes a moment, then a write: the branch still running when the other fails.
            const writing = (async () => {
              await subject.sleep(tx, 0.2);
              await subject.write(tx, receiptId, 'parallel');
            })();
            branches.push(writing);
            await Promise.all([writing, Promise.reject(new Error('out of stock: the other branch failed'))]);
          },
        },
        worker: { concurrency: 1, prefetch: 0, maxAttempts: 5 },
      });
      const receipt = await inbox.accept(message({ consumer }));
      const result = await inbox.runOnce();
      expect(result).toMatchObject({ claimed: 1, retried: 1 });
      // The branch has settled (its write done, or refused) before the rows are counted.
      await Promise.allSettled(branches);
      expect(branches).toHaveLength(1);
      expect(await businessCount(t, receipt.record.id)).toBe(0);
    });

    it('completes the receipt with its row and both events, in one attempt', async () => {
      const inbox = makeInbox(subject.adapter, {
        handlers: {
          [`${consumer}-emits`]: async (_payload, { tx, receiptId }) => {
            const on = tx as ApplicationTransaction;
            await Promise.all([
              subject.write(tx, receiptId, 'parallel'),
              emit(on, { type: 'order.placed', payload: { receiptId } }),
              emit(on, { type: 'stock.reserved', payload: { receiptId } }),
            ]);
          },
        },
        worker: { concurrency: 1, prefetch: 0, maxAttempts: 3 },
      });
      const receipt = await inbox.accept(message({ consumer: `${consumer}-emits` }));
      const result = await inbox.runOnce();
      expect((await receiptRow(t, receipt.record.id)).last_error).toBeNull();
      expect(result).toMatchObject({ claimed: 1, completed: 1 });
      expect(await businessCount(t, receipt.record.id)).toBe(1);
      const events = await t.db.query<{ type: string }>(
        "SELECT event_type AS type FROM outbox_events WHERE payload->>'receiptId' = $1 ORDER BY event_type",
        [receipt.record.id],
      );
      expect(events.map((event) => event.type)).toEqual(['order.placed', 'stock.reserved']);
    });
  });
});
