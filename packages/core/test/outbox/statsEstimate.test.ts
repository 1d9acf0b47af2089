/**
 * The SENT estimate after a purge. estimateHistory takes the larger of
 * the statistics system's live rows and pg_class.reltuples; reltuples is only lowered by VACUUM /
 * ANALYZE, so after a purge deleted most of the history the estimate stays at the old size until
 * autovacuum reaches the table (minutes, hours on a big busy table). A dashboard watching SENT after
 * an operator's purge sees nothing go; one alerting on history growth keeps firing.
 *
 * Expected: once the statistics system reports the table's live rows, the estimate follows them
 * (here within a factor of two of the truth).
 */
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { eventStats } from '../../src/outbox/sql/stats';
import { liveRowsReported } from '../historyCost';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

it('the SENT estimate follows a purge once the live rows are reported', async () => {
  await t.db.execute('ALTER TABLE outbox_events SET (autovacuum_enabled = false)'); // autovacuum not there yet
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at, created_at)
     SELECT gen_random_uuid(), 'estimate.sent', '{}', 5, 'SENT', now() - interval '2 days', now() - interval '3 days'
     FROM generate_series(1, 20000)`,
  );
  await liveRowsReported(t.db, 'outbox_events');
  await t.db.execute('ANALYZE outbox_events'); // reltuples 20,000, as autovacuum last left it
  await liveRowsReported(t.db, 'outbox_events');
  const before = await eventStats(t.db, null, 1_000);
  expect(before.sent).toBeGreaterThanOrEqual(18_000);
  // The operator purges most of the history.
  await t.db.execute(
    `DELETE FROM outbox_events WHERE id IN (SELECT id FROM outbox_events WHERE status = 'SENT' LIMIT 18000)`,
  );
  await liveRowsReported(t.db, 'outbox_events');
  const after = await eventStats(t.db, null, 1_000);
  const [truth] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE status = 'SENT'`,
  );
  expect(after.sent_estimated).toBe(true);
  expect(after.sent).toBeLessThanOrEqual(2 * (truth?.n ?? 0));
});
