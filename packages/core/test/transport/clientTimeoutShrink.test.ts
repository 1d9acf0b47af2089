/**
 * Review 12 finding: the halving of an oversized batch (acceptHolding, sizeMayCause, 58f4f61) only reads
 * FERRY_TIMEOUT and SQLSTATE class 53 as "the size may cause it". A pool whose own query_timeout
 * (node-postgres's client-side deadline, a common pool setting) ends the statement first fails
 * with "Query read timeout", translated FERRY_DATABASE_UNAVAILABLE (dbErrors.ts): the same batch
 * is offered whole after every backoff and times out every time, the stall the change fixed.
 *
 * 100 ms per inserted receipt (test-support/slowReceipts.ts) against a 500 ms query_timeout:
 * 20 inputs take 2 s, 2 take 0.2 s.
 */
import type { InboxAcceptInput } from '@ferry/core';
import { acceptHolding } from '@ferry/core/transport';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { slowReceiptInserts } from '../../../../test-support/slowReceipts';
import { makeInbox, message } from '../inbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
  await slowReceiptInserts(t.db, 0.1);
});
afterAll(async () => {
  await t.drop();
});

describe('Review finding (failed first): a batch too big for the pool query_timeout', () => {
  it('goes through in parts, as one too big for statementTimeoutMs does', async () => {
    const client = t.newClient({ query_timeout: 500 });
    try {
      const inbox = makeInbox(client, { statementTimeoutMs: 30_000 });
      const inputs: InboxAcceptInput[] = Array.from({ length: 20 }, () => message());
      const sizes: number[] = [];
      const errors = new Set<string>();
      const held = await acceptHolding(
        inputs,
        async (batch) => {
          sizes.push(batch.length);
          try {
            return await inbox.acceptMany(batch);
          } catch (error) {
            errors.add(String((error as { code?: string }).code) + ': ' + String((error as Error).message));
            throw error;
          }
        },
        {
          backoff: { initialMs: 20, maxMs: 40, multiplier: 2, jitter: 'none' },
          signal: AbortSignal.timeout(15_000),
          transport: 'test',
          source: 'q',
        },
        () => Promise.resolve(),
      );
      // Expected: settled, in smaller parts; actual: released at the signal, 27 offers of all 20, each
      // failing "FERRY_DATABASE_UNAVAILABLE: inbox failed: Query read timeout".
      expect({ kind: held.kind, smallest: Math.min(...sizes), errors: [...errors] }).toMatchObject({
        kind: 'settled',
      });
    } finally {
      await client.$disconnect();
    }
  }, 30_000);
});
