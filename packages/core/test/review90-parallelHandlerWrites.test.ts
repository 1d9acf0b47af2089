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
 */
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { ADAPTER_SUBJECTS, consumerOf, type AdapterSubject } from './inbox/adapterSubjects';
import { businessCount, createBusinessTable, makeInbox, message } from './inbox/helpers';

describe('review90: a handler whose parallel branch fails while another is between statements', () => {
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
  });
});
