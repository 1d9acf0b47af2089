/**
 * Review 82 (outbox relay: a row that cannot be completed poisons its batch), failing on main.
 *
 * What I did: an event that went FAILED after its 5 attempts (retry_count 5, max_retries 5) is put
 * back to PENDING by SQL the way operators have always done it (`UPDATE outbox_events SET
 * status = 'PENDING', failed_at = NULL WHERE status = 'FAILED'`: the status, not the counters);
 * an ordinary event is emitted after it. The broker still refuses the first one (`retryable`), and
 * takes the second. Relay cycles with runOnce(), as the running loop would run them.
 *
 * What happened: the relay claims both in one batch and completes them in one statement. The
 * failure's completion sets retry_count = 5 + 1, which the table's CHECK (retry_count <=
 * max_retries) refuses: the whole statement fails (FERRY_VALIDATION_FAILED,
 * outbox_events_counts_check), the SENT of the neighbour included. The claim is handed back
 * (abandonedClaims: counting no attempt and no expired claim), the next cycle claims the same two
 * rows, publishes the neighbour again, fails again: the neighbour is published at every cycle, for
 * ever (three cycles: delivered three times, never SENT), the poison guard never stops it, and the
 * cycle error (a batch-wide "validation" failure) is all the operator sees. A `permanent` outcome,
 * or the relay's own refusal of a row emit() would not write, adds one to retry_count the same way.
 *
 * What should happen: docs/outbox.md (Relay cycle, step 3) promises that a row emit() would not
 * write, e.g. one written by SQL, is FAILED alone "and the rows claimed with it are published as
 * usual (before, a JSON string payload crashed the cycle and left the whole batch PROCESSING for
 * ever …)". A row whose attempts are already spent is such a row: it goes FAILED alone
 * (attempts_exhausted), the neighbour is published once and SENT.
 *
 * Where: packages/core/src/outbox/sql/completeBatch.ts, SET_FAILED (`retry_count = e.retry_count
 * + 1` unbounded: LEAST(e.retry_count + 1, e.max_retries) keeps the CHECK, FAILED already follows
 * from `retry_count + 1 >= max_retries`); or refuse such a row at the claim (foreignRows.ts).
 */
import { emit } from '@ferry/core';
import { InMemoryPublisher } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';
import { relay } from './outbox/helpers';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('review82: a PENDING row with its attempts spent, claimed with a neighbour', () => {
  it('goes FAILED alone; the neighbour is published once and SENT', async () => {
    const spent = await emit(t.db, { type: 'invoice.requested', payload: { orderId: 1 } });
    // Its five attempts, as the relay leaves them ...
    await t.db.execute(
      `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), retry_count = max_retries,
         last_error = 'broker said no' WHERE id = $1::uuid`,
      [spent.id],
    );
    // ... and the operator's reprocessing by SQL: the status, not the counters.
    await t.db.execute(
      `UPDATE outbox_events SET status = 'PENDING', failed_at = NULL, last_error = NULL WHERE status = 'FAILED'`,
    );
    const neighbour = await emit(t.db, { type: 'invoice.created', payload: { orderId: 2 } });
    const publisher = new InMemoryPublisher({
      decide: (m) => (m.id === spent.id ? { retryable: 'broker still says no' } : 'sent'),
    });
    const r = relay(t.db, publisher);
    const cycles: string[] = [];
    try {
      for (let cycle = 0; cycle < 3; cycle += 1) {
        cycles.push(
          await r.runOnce().then(
            (result) => `claimed ${result.claimed}`,
            (e: unknown) => `error: ${(e as Error).message}`,
          ),
        );
      }
    } finally {
      await r.close();
    }
    const rows = await t.db.query<{ id: string; status: string }>(
      `SELECT id::text AS id, status FROM outbox_events ORDER BY seq`,
    );
    const deliveries = publisher.delivered.filter((m) => m.id === neighbour.id).length;
    // On main: every cycle fails (outbox_events_counts_check), both rows PROCESSING, the neighbour
    // delivered three times.
    expect({ rows: rows.map((row) => row.status), deliveries, cycles }).toEqual({
      rows: ['FAILED', 'SENT'],
      deliveries: 1,
      cycles: [
        expect.stringMatching(/^claimed/),
        expect.stringMatching(/^claimed/),
        expect.stringMatching(/^claimed/),
      ],
    });
  });
});
