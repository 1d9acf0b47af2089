/**
 * Review 82 (outbox, emit of many keyed events), failing on main.
 *
 * What I did: emitMany of keyed events, one ordering key per order (`order-<n>`, the doc's own
 * pattern), as a bulk import does in one transaction, against a PostgreSQL with its default lock
 * settings (max_locks_per_transaction 64, max_connections 100).
 *
 * What happened: emit takes one transaction-scoped advisory lock per distinct ordering key
 * (insertEvents.ts, LOCK_KEYS: `pg_advisory_xact_lock` for each key of the call, held to the end
 * of the transaction). Each takes an entry in PostgreSQL's shared lock table, sized for
 * max_locks_per_transaction entries per connection on average, about 12,800 here for the whole
 * server. Observed by hand (not repeated here: filling the server's lock table fails every other
 * session on it, other test files included):
 * 1. emitMany of 20,000 keyed events fails every time with `out of shared memory` (53200),
 *    reported as FERRY_DATABASE_UNAVAILABLE, retriable: true. Retrying cannot help: the call
 *    itself needs more locks than the server has. Nothing documents a bound on the keys of one
 *    call or transaction.
 * 2. An application transaction that emitted about 12,800 keyed events (in chunks, each emitMany
 *    accepted) holds the whole lock table: meanwhile another session's plain `INSERT` into an
 *    application table fails with `out of shared memory`. One transaction's emits take down
 *    unrelated writers.
 * The test checks the cause with a harmless size: one emitMany of 1,000 keyed events holds 1,000
 * lock table entries, 15 times a transaction's share (max_locks_per_transaction).
 *
 * What should happen: emit's per-key serialization must not need a lock table entry per key:
 * e.g. lock a bounded number of hash buckets of the keys (`hashtextextended(key) % N`, taken in
 * ascending order as now: more serialization between keys sharing a bucket, the same ordering
 * guarantee, at most N locks per transaction), so that 20,000 keyed events emit and neighbours are
 * untouched. At the very least a call over a documented bound is refused before any SQL with a
 * non-retriable FerryValidationError, never a retriable "database unavailable".
 *
 * Where: packages/core/src/outbox/sql/insertEvents.ts (LOCK_KEYS).
 */
import { emitMany, type OutboxEventInput } from '@ferry/core';
import { Pool } from 'pg';
import { listened } from '../../../test-support/oneStatement';
import { createTestDatabase, type TestDatabase } from '../../../test-support/database';

let t: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  t = await createTestDatabase();
  pool = listened(new Pool({ connectionString: t.url, max: 3 }));
});
afterAll(async () => {
  await pool.end();
  await t.drop();
});

const keyed = (from: number, count: number): OutboxEventInput[] =>
  Array.from({ length: count }, (_, i) => ({
    type: 'order.imported',
    payload: { orderId: from + i },
    orderingKey: `order-${from + i}`,
  }));

describe('review82: one advisory lock per ordering key', () => {
  it('emitMany of 1,000 keyed events stays within a transaction’s share of the lock table', async () => {
    const app = await pool.connect();
    try {
      await app.query('BEGIN');
      await emitMany(app, keyed(0, 1_000));
      const [held] = (
        await app.query<{ advisory: number; share: number }>(
          `SELECT (SELECT count(*)::int FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory')
             AS advisory, current_setting('max_locks_per_transaction')::int AS share`,
        )
      ).rows;
      await app.query('ROLLBACK');
      // On main: 1,000 advisory locks held until the transaction ends (share: 64).
      expect(held!.advisory).toBeLessThanOrEqual(held!.share);
    } finally {
      app.release();
    }
  });
});
