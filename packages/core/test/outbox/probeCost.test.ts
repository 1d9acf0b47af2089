/**
 * The half-open probe's claim past a refused destination (sql/probeClaim.ts) costs the same with
 * a dead backlog of 1,000 rows and of 100,000: it reads the other destinations' due rows off the
 * due-by-destination index and never walks the dead destination's rows, keyed or not, with
 * statistics gathered with the backlog in place or before it arrived. "Work" is counted from
 * EXPLAIN ANALYZE (planWork), on custom and on generic plans, as in claimCost.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import { relayStore } from '@ferry/core/internal/testing';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase } from '../costDatabase';
import { measuring } from '../measuring';
import type { PlanKind } from '../planWork';
import type { FailedHeadPolicy } from '@ferry/core';

let t: TestDatabase;
beforeAll(async () => {
  t = await costDatabase('outbox_events');
});
afterAll(async () => {
  await t.drop();
});

/**
 * `backlog` PENDING rows of 'queue-down' (every other one keyed, over 500 keys), then 20 other
 * destinations with 5 due rows each (emitted after the backlog, so behind it in due order); one
 * probe with 'queue-down' refused. Returns its work and the destinations of what it claimed.
 */
async function probePastDeadBacklog(
  backlog: number,
  statistics: 'fresh' | 'stale',
  plan: PlanKind,
  failedHead: FailedHeadPolicy = 'block',
  refused: string[] = ['queue-down'],
) {
  await t.db.execute('TRUNCATE outbox_events');
  if (statistics === 'stale') {
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at)
       SELECT gen_random_uuid(), 'probe.cost', '{}', 5, 'SENT', now() FROM generate_series(1, 2000)`,
    );
    await t.db.execute('ANALYZE outbox_events');
  }
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, destination, ordering_key, next_attempt_at)
     SELECT gen_random_uuid(), 'probe.cost', '{}', 5, 'queue-down',
       CASE WHEN g % 2 = 0 THEN 'dead-' || (g % 500) END, now() - interval '1 hour' + g * interval '1 ms'
     FROM generate_series(0, $1::int - 1) g`,
    [backlog],
  );
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, destination, ordering_key)
     SELECT gen_random_uuid(), 'probe.cost', '{}', 5, 'queue-up-' || (g % 20), CASE WHEN g % 2 = 0 THEN 'up-' || g END
     FROM generate_series(0, 99) g`,
  );
  if (statistics === 'fresh') await t.db.execute('ANALYZE outbox_events');
  const explainer = listened(new Client({ connectionString: t.url }));
  await explainer.connect();
  try {
    const measured = measuring(t.db, explainer, plan);
    const probe = await relayStore(measured.db).probe({
      token: randomUUID(),
      limit: 1,
      leaseMs: 60_000,
      failedHead,
      refused,
      cursor: null,
    });
    return { work: measured.total(), destinations: probe.rows.map((row) => row.destination) };
  } finally {
    await explainer.end();
  }
}

const CASES: ['fresh' | 'stale', PlanKind][] = [
  ['fresh', 'custom'],
  ['fresh', 'generic'],
  ['stale', 'custom'],
  ['stale', 'generic'],
];

it.each(CASES)(
  'a probe past 100,000 dead rows costs what one past 1,000 does (%s statistics, %s plans)',
  async (statistics, plan) => {
    const small = await probePastDeadBacklog(1_000, statistics, plan);
    const large = await probePastDeadBacklog(100_000, statistics, plan);
    expect(small.destinations).toEqual([expect.stringMatching(/^queue-up-/)]);
    expect(large.destinations).toEqual([expect.stringMatching(/^queue-up-/)]);
    // A hundred times the backlog: the same work, give or take a B-tree level.
    expect(large.work).toBeLessThan(small.work * 1.5);
  },
  300_000,
);

it("under failedHead 'skip' too", async () => {
  const small = await probePastDeadBacklog(1_000, 'stale', 'custom', 'skip');
  const large = await probePastDeadBacklog(100_000, 'stale', 'custom', 'skip');
  expect(large.destinations).toEqual([expect.stringMatching(/^queue-up-/)]);
  expect(large.work).toBeLessThan(small.work * 1.5);
}, 300_000);

it('every destination refused: the turn of the dead one costs the same past 100,000 dead rows (stale statistics, generic plans)', async () => {
  // The probe's step 2 (one refused destination in turn, the least recently refused first): it
  // reads at most a budget of due rows of the refused destinations, never the whole backlog.
  const refused = ['queue-down', ...Array.from({ length: 20 }, (_, i) => `queue-up-${i}`)];
  const small = await probePastDeadBacklog(1_000, 'stale', 'generic', 'block', refused);
  const large = await probePastDeadBacklog(100_000, 'stale', 'generic', 'block', refused);
  expect(small.destinations).toEqual(['queue-down']);
  expect(large.destinations).toEqual(['queue-down']);
  expect(large.work).toBeLessThan(small.work * 1.5);
}, 300_000);

/**
 * Review 61: the probe's key scan (step 1's fallback through the ordering index) costs the same
 * whatever a blocked key holds: 'queue-up' has one key whose head is FAILED with `blocked` events
 * behind it (more than the rows step 1 reads of it) and one ready key; 'queue-down' is refused.
 */
async function probePastBlockedKey(blocked: number) {
  await t.db.execute('TRUNCATE outbox_events');
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, destination, ordering_key, next_attempt_at)
     SELECT gen_random_uuid(), 'probe.cost', '{}', 5, 'queue-up', 'blocked',
       now() - interval '1 hour' + g * interval '1 ms'
     FROM generate_series(0, $1::int) g`,
    [blocked],
  );
  await t.db.execute(
    `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), last_error = 'poison', retry_count = max_retries
     WHERE seq = (SELECT min(seq) FROM outbox_events)`,
  );
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, destination, ordering_key)
     VALUES (gen_random_uuid(), 'probe.cost', '{}', 5, 'queue-up', 'ready'),
            (gen_random_uuid(), 'probe.cost', '{}', 5, 'queue-down', NULL)`,
  );
  const explainer = listened(new Client({ connectionString: t.url }));
  await explainer.connect();
  try {
    const measured = measuring(t.db, explainer, 'custom');
    const probe = await relayStore(measured.db).probe({
      token: randomUUID(),
      limit: 1,
      leaseMs: 60_000,
      failedHead: 'block',
      refused: ['queue-down'],
      cursor: null,
    });
    return { work: measured.total(), keys: probe.rows.map((row) => row.ordering_key) };
  } finally {
    await explainer.end();
  }
}

it('a key blocked behind its FAILED head with 100,000 events: the probe finds the other key at the cost it does past 1,000', async () => {
  const small = await probePastBlockedKey(1_000);
  const large = await probePastBlockedKey(100_000);
  expect(small.keys).toEqual(['ready']);
  expect(large.keys).toEqual(['ready']);
  expect(large.work).toBeLessThan(small.work * 1.5);
}, 300_000);
