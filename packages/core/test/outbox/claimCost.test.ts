/**
 * A claim's work is bounded by its batch and due window, not by the backlog. Several relays on
 * one backlog claim at once: while one claim statement runs, the rows at the front of the due
 * order are locked by it, and the others skip them. A claim must then stop at the due window's
 * edge (and leave the rest to the key-scan statement, which takes the next unlocked rows),
 * instead of walking every row of the backlog and checking each against the window's edge.
 *
 * "Work" is counted from EXPLAIN ANALYZE (planWork). Each case is measured on the plans of
 * unnamed statements (custom: planned with the values) and again on the generic plan a named
 * statement (fromPg, or Prisma with ferryStatementNames) may switch to after five executions.
 */
import { randomUUID } from 'node:crypto';
import { listened } from '../../../../test-support/oneStatement';
import { Client, Pool } from 'pg';
import { fromPg, OUTBOX_DEFAULTS, type FailedHeadPolicy } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase, emptyTable } from '../costDatabase';
import { measuring } from '../measuring';
import type { PlanKind } from '../planWork';

const LIMIT = 100;

let t: TestDatabase;
let pool: Pool | undefined;
/** One pool for the file's fixture claims (completionOf). */
const claimPool = (): Pool => (pool ??= listened(new Pool({ connectionString: t.url, max: 1 })));
beforeAll(async () => {
  t = await costDatabase('outbox_events');
});
afterAll(async () => {
  await pool?.end();
  await t.drop();
});

/**
 * `backlog` unkeyed PENDING events, the first 2 x LIMIT of them in due order locked by another
 * session, as a concurrent claim statement holds them; one claim of LIMIT rows. Returns the
 * claim's work, the rows it claimed, the statements it took and whether it asks the next claim
 * to start with the key scan. Statistics 'fresh': analyzed with the backlog in place; 'stale':
 * analyzed when the table held only SENT events, before the backlog arrived (as after a burst,
 * until autovacuum analyzes again): the planner then takes PENDING rows to be rare.
 */
async function claimBehindLockedWindow(
  backlog: number,
  statistics: 'fresh' | 'stale' = 'fresh',
  plan: PlanKind = 'custom',
) {
  await t.db.execute('TRUNCATE outbox_events');
  if (statistics === 'stale') {
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at)
       SELECT gen_random_uuid(), 'claim.cost', '{}', 5, 'SENT', now() FROM generate_series(1, 2000)`,
    );
    await t.db.execute('ANALYZE outbox_events');
  }
  // As emitMany writes unkeyed events (one statement: one due time, seq in insertion order).
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries)
     SELECT gen_random_uuid(), 'claim.cost', jsonb_build_object('i', g), 5
     FROM generate_series(0, $1::int - 1) g`,
    [backlog],
  );
  if (statistics === 'fresh') await t.db.execute('ANALYZE outbox_events');
  const holder = listened(new Client({ connectionString: t.url }));
  const explainer = listened(new Client({ connectionString: t.url }));
  await Promise.all([holder.connect(), explainer.connect()]);
  try {
    await holder.query('BEGIN');
    await holder.query(
      `SELECT id FROM outbox_events WHERE status = 'PENDING'
       ORDER BY next_attempt_at, seq LIMIT $1 FOR UPDATE`,
      [LIMIT * 2],
    );
    const measured = measuring(t.db, explainer, plan);
    const claim = await relayStore(measured.db).claim({
      token: randomUUID(),
      limit: LIMIT,
      leaseMs: 60_000,
      failedHead: 'block',
    });
    await holder.query('ROLLBACK');
    return {
      work: measured.total(),
      claimed: claim.rows.length,
      statements: measured.statements(),
      keyScanFirst: claim.keyScanFirst,
    };
  } finally {
    await Promise.all([holder.end(), explainer.end()]);
  }
}

const PLANS: PlanKind[] = ['custom', 'generic'];

describe.each(PLANS)('claim cost while other claims hold the front of the backlog (%s plans)', (plan) => {
  it('claims a full batch past the held rows, with work that does not grow with the backlog', async () => {
    const small = await claimBehindLockedWindow(2_000, 'fresh', plan);
    const large = await claimBehindLockedWindow(20_000, 'fresh', plan);
    expect(small.claimed).toBe(LIMIT);
    expect(large.claimed).toBe(LIMIT);
    // Ten times the backlog: the same work, give or take a B-tree level (not ten times more).
    expect(large.work).toBeLessThan(small.work * 1.5);
  }, 120_000);

  it('fills its batch in one statement when the held rows have no ordering key', async () => {
    // No keyed event is due before the held window's edge, so nothing the window protects can be
    // overtaken: the cheap statement takes the unlocked rows past it. Two statements (the cheap
    // one coming back empty, then the key scan) and a key scan first on every later claim were
    // what 8 relays on an unkeyed backlog paid on every claim.
    const claim = await claimBehindLockedWindow(2_000, 'fresh', plan);
    expect([claim.claimed, claim.statements, claim.keyScanFirst]).toEqual([LIMIT, 1, false]);
  }, 60_000);

  it('does not walk the backlog when statistics predate it', async () => {
    const small = await claimBehindLockedWindow(2_000, 'stale', plan);
    const large = await claimBehindLockedWindow(20_000, 'stale', plan);
    expect(small.claimed).toBe(LIMIT);
    expect(large.claimed).toBe(LIMIT);
    expect(large.work).toBeLessThan(small.work * 1.5);
  }, 120_000);
});

/**
 * Statistics gathered before a keyed burst: 'unkeyed' when the table held only unkeyed PENDING
 * events (then sent and gone), 'sent' when it held only SENT ones. Either way the planner takes
 * every ordering_key to be NULL, so it expects the ordering index to be empty.
 */
type KeyedStatistics = 'unkeyed' | 'sent';

async function analyzeBefore(statistics: KeyedStatistics): Promise<void> {
  await t.db.execute('TRUNCATE outbox_events');
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at)
     SELECT gen_random_uuid(), 'claim.cost', '{}', 5, $1, CASE WHEN $1 = 'SENT' THEN now() END
     FROM generate_series(1, 2000)`,
    [statistics === 'sent' ? 'SENT' : 'PENDING'],
  );
  await t.db.execute('ANALYZE outbox_events');
  if (statistics === 'unkeyed') await t.db.execute('TRUNCATE outbox_events');
}

/**
 * Rows that pile up beside a backlog without adding to what a claim can take: `failed` FAILED
 * events, the first of each backlog key (so under 'skip' every head in the due window overtakes
 * one and the skip guard runs), the rest on keys of their own that sort after every backlog key
 * (`z...`, never reached by the key scan); `inFlight` PROCESSING events other relays' claims hold
 * under a live lease, on keys of their own (`p...`, every other one unkeyed).
 */
interface Grown {
  readonly failed?: number;
  readonly inFlight?: number;
}

/**
 * Statistics for a claim: those of KeyedStatistics (gathered before everything), 'fresh' (with
 * everything in place) or 'before' (with the backlog in place, while the grown rows were still
 * SENT: they failed or were claimed since, so the planner takes FAILED and PROCESSING rows to
 * be rare).
 */
type ClaimStatistics = KeyedStatistics | 'fresh' | 'before';

/**
 * A keyed backlog of `backlog` events, one claim of LIMIT rows.
 * 'blocked': a FAILED head holds back key k-blocked, whose `backlog / 2` events are due first
 * (they fill the due window, so the key-scan statement runs), and the other half spreads over 500
 * keys due later. 'interleaved': the backlog spread over 1,000 keys in due order, so the due
 * window holds the first events of some hundred keys, each checked for an earlier event.
 */
async function claimKeyedBacklog(
  backlog: number,
  statistics: ClaimStatistics,
  shape: 'blocked' | 'interleaved',
  failedHead: FailedHeadPolicy,
  plan: PlanKind,
  grown: Grown = {},
) {
  if (statistics === 'unkeyed' || statistics === 'sent') await analyzeBefore(statistics);
  else await t.db.execute('TRUNCATE outbox_events');
  // Inserted SENT, made FAILED / PROCESSING after the 'before' analysis.
  const later = statistics === 'before';
  await t.db.execute(
    `INSERT INTO outbox_events
       (id, event_type, payload, max_retries, ordering_key, status, failed_at, published_at)
     SELECT gen_random_uuid(), 'claim.cost.failed', '{}', 5,
       CASE WHEN g < $2 THEN 'k' || g ELSE 'z' || g END,
       CASE WHEN $3 THEN 'SENT' ELSE 'FAILED' END,
       CASE WHEN $3 THEN NULL ELSE now() END, CASE WHEN $3 THEN now() END
     FROM generate_series(0, $1::int - 1) g`,
    [grown.failed ?? 0, shape === 'interleaved' ? 1000 : 500, later],
  );
  if (shape === 'blocked') {
    await t.db.execute(
      `INSERT INTO outbox_events (id, event_type, payload, max_retries, ordering_key, status, failed_at)
       VALUES (gen_random_uuid(), 'claim.cost', '{}', 5, 'k-blocked', 'FAILED', now())`,
    );
  }
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, ordering_key, next_attempt_at)
     SELECT gen_random_uuid(), 'claim.cost', '{}', 5,
       CASE WHEN $2 = 'interleaved' THEN 'k' || (g % 1000)
            WHEN g <= $1 / 2 THEN 'k-blocked' ELSE 'k' || (g % 500) END,
       now() - interval '1 hour' + g * interval '1 ms'
     FROM generate_series(1, $1::int) g`,
    [backlog, shape],
  );
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, ordering_key, status,
       claim_token, lease_expires_at, claimed_at, published_at)
     SELECT gen_random_uuid(), 'claim.cost.in-flight', '{}', 5,
       CASE WHEN g % 2 = 0 THEN 'p' || g END, CASE WHEN $2 THEN 'SENT' ELSE 'PROCESSING' END,
       CASE WHEN NOT $2 THEN gen_random_uuid() END, CASE WHEN NOT $2 THEN now() + interval '1 hour' END,
       CASE WHEN NOT $2 THEN now() END, CASE WHEN $2 THEN now() END
     FROM generate_series(1, $1::int) g`,
    [grown.inFlight ?? 0, later],
  );
  if (statistics === 'fresh' || later) await t.db.execute('ANALYZE outbox_events');
  if (later) {
    await t.db.execute(
      `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), published_at = NULL
       WHERE event_type = 'claim.cost.failed'`,
    );
    await t.db.execute(
      `UPDATE outbox_events SET status = 'PROCESSING', published_at = NULL, claim_token = gen_random_uuid(),
         lease_expires_at = now() + interval '1 hour', claimed_at = now()
       WHERE event_type = 'claim.cost.in-flight'`,
    );
  }
  const explainer = listened(new Client({ connectionString: t.url }));
  await explainer.connect();
  try {
    const measured = measuring(t.db, explainer, plan);
    const claim = await relayStore(measured.db).claim({
      token: randomUUID(),
      limit: LIMIT,
      leaseMs: 60_000,
      failedHead,
    });
    return { work: measured.total(), claimed: claim.rows.length, skipped: claim.skippedIds.length };
  } finally {
    await explainer.end();
  }
}

describe.each(PLANS)('claim cost on a keyed backlog with statistics from before it (%s plans)', (plan) => {
  const cases: [KeyedStatistics, 'blocked' | 'interleaved', FailedHeadPolicy][] = [
    ['unkeyed', 'blocked', 'block'],
    ['unkeyed', 'blocked', 'skip'],
    ['sent', 'blocked', 'block'],
    ['sent', 'blocked', 'skip'],
    ['sent', 'interleaved', 'block'],
    ['sent', 'interleaved', 'skip'],
    ['unkeyed', 'interleaved', 'skip'],
  ];
  it.each(cases)(
    'statistics %s, %s keys, failedHead %s',
    async (statistics, shape, failedHead) => {
      const small = await claimKeyedBacklog(2_000, statistics, shape, failedHead, plan);
      const large = await claimKeyedBacklog(20_000, statistics, shape, failedHead, plan);
      expect(small.claimed).toBe(LIMIT);
      expect(large.claimed).toBe(LIMIT);
      expect(large.work).toBeLessThan(small.work * 1.5);
    },
    120_000,
  );
});

/**
 * FAILED events and rows in flight elsewhere in the table are no part of a claim's work: the skip
 * guard reads the FAILED events its candidates overtake (by primary key and their keys' ordering
 * entries), and "no event of this key in flight" is one probe per candidate key, whatever the
 * rest of the table holds.
 */
describe.each(PLANS)('claim cost as FAILED events and rows in flight pile up (%s plans)', (plan) => {
  const statistics: ClaimStatistics[] = ['fresh', 'before', 'sent', 'unkeyed'];

  it.each(statistics)(
    'FAILED heads, failedHead skip, statistics %s',
    async (stats) => {
      const small = await claimKeyedBacklog(2_000, stats, 'interleaved', 'skip', plan, { failed: 2_000 });
      const large = await claimKeyedBacklog(2_000, stats, 'interleaved', 'skip', plan, {
        failed: 20_000,
      });
      // Every claimed row overtook its key's FAILED head.
      expect([small.claimed, small.skipped]).toEqual([LIMIT, LIMIT]);
      expect([large.claimed, large.skipped]).toEqual([LIMIT, LIMIT]);
      expect(large.work).toBeLessThan(small.work * 1.5);
    },
    120_000,
  );

  const inFlight: [ClaimStatistics, 'blocked' | 'interleaved', FailedHeadPolicy][] = statistics.flatMap(
    (stats) =>
      (['blocked', 'interleaved'] as const).flatMap((shape) =>
        (['block', 'skip'] as const).map((policy): [ClaimStatistics, typeof shape, FailedHeadPolicy] => [
          stats,
          shape,
          policy,
        ]),
      ),
  );
  it.each(inFlight)(
    'rows in flight, statistics %s, %s keys, failedHead %s',
    async (stats, shape, failedHead) => {
      const small = await claimKeyedBacklog(2_000, stats, shape, failedHead, plan, { inFlight: 2_000 });
      const large = await claimKeyedBacklog(2_000, stats, shape, failedHead, plan, {
        inFlight: 20_000,
      });
      expect(small.claimed).toBe(LIMIT);
      expect(large.claimed).toBe(LIMIT);
      expect(large.work).toBeLessThan(small.work * 1.5);
    },
    120_000,
  );
});

/**
 * A completion's work grows with its own batch: never with the rows other claims hold, nor with
 * the batch squared. The old statement joined its input to the claim's rows found through the
 * lease index (status 'PROCESSING' literal), so it read every in-flight row of every claim; and
 * in a new database (no statistics yet), a generic plan took those rows for 1 and the input for
 * 10 and rescanned the whole input for each row: 500 completions beside 6,500 rows of other
 * claims cost 256,000 rows of work (168 ms per completion in the relay-kafka bench on fromPg).
 * That plan needs a database never analyzed, which these cases cannot recreate in place (the
 * planner keeps the table's size it has cached); the in-flight cases fail on the old statement.
 */
async function completionOf(
  size: number,
  claimsInFlight: number,
  plan: PlanKind,
  statistics: 'pending' | 'none',
): Promise<{ work: number; completed: number }> {
  await emptyTable(t.db, 'outbox_events', statistics === 'none');
  // The history a table keeps (SENT rows): a completion reads none of it.
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, status, published_at)
     SELECT gen_random_uuid(), 'complete.cost.sent', '{}', 5, 'SENT', now() FROM generate_series(1, 20000)`,
  );
  // The rows emitMany writes for unkeyed events (one statement: one due time, seq in insertion
  // order, payload_bytes the payload's text), inserted in SQL: validating and sending up to 8,000
  // events through emitMany cost most of this file's CPU, and a completion's work does not depend
  // on how its rows were written.
  await t.db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, max_retries, payload_bytes)
     SELECT gen_random_uuid(), 'complete.cost', p, $2, octet_length(p::text)
     FROM generate_series(0, $1::int - 1) g, jsonb_build_object('i', g) p ORDER BY g`,
    [claimsInFlight * 500 + 1_000, OUTBOX_DEFAULTS['retry.maxRetries'].default],
  );
  if (statistics === 'pending') await t.db.execute('ANALYZE outbox_events');
  // The claims that hold the rows, on node-postgres: the same statements as on Prisma, for less
  // CPU per row read (the measured completion still runs on t.db).
  const store = relayStore(fromPg(claimPool()));
  const tokens = Array.from({ length: claimsInFlight }, () => randomUUID());
  const claims = [];
  for (const token of tokens) {
    claims.push(await store.claim({ token, limit: 500, leaseMs: 60_000, failedHead: 'block' }));
  }
  const explainer = listened(new Client({ connectionString: t.url }));
  await explainer.connect();
  try {
    const measured = measuring(t.db, explainer, plan);
    const rows = claims[0]!.rows.slice(0, size);
    const completed = await relayStore(measured.db).complete(
      tokens[0]!,
      rows.map((row) => ({ id: row.id, kind: 'sent' as const, error: null, delayMs: 0 })),
    );
    return { work: measured.total(), completed: completed.length };
  } finally {
    await explainer.end();
  }
}

describe.each(PLANS)('completion cost with statistics from before the claims (%s plans)', (plan) => {
  // Without statistics a custom plan may scan the table instead of probing the primary key: the
  // cheapest plan for a table of unknown size, bounded by the table, and gone once autovacuum
  // analyzes it. The generic plan's quadratic join was neither.
  it.each(plan === 'generic' ? (['pending', 'none'] as const) : (['pending'] as const))(
    'completes 500 rows with about five times the work of 100 (statistics %s)',
    async (statistics) => {
      const small = await completionOf(100, 14, plan, statistics);
      const large = await completionOf(500, 14, plan, statistics);
      expect([small.completed, large.completed]).toEqual([100, 500]);
      expect(large.work).toBeLessThan(small.work * 5 * 1.5);
    },
    60_000,
  );

  it.each(['pending', 'none'] as const)(
    'completes its 500 rows with the same work beside 500 or 6,500 rows of other claims (statistics %s)',
    async (statistics) => {
      const few = await completionOf(500, 2, plan, statistics);
      const many = await completionOf(500, 14, plan, statistics);
      expect([few.completed, many.completed]).toEqual([500, 500]);
      expect(many.work).toBeLessThan(few.work * 1.5);
    },
    60_000,
  );
});
