/**
 * The relay's maintenance statements (lease recovery, release and renewal of a claim) and the
 * operator's (release of stuck claims, retry, mark-failed, purge, a tenant's list) work on their
 * own rows: their work must not grow with the rest of the table, that is other claims' rows in
 * flight, the SENT history, FAILED and PENDING rows, rows past their LIMIT, other tenants' rows.
 * Where a statement takes a batch, its work grows linearly with it.
 *
 * Work is counted from EXPLAIN ANALYZE (planWork): rows, not time. Every case runs on custom plans
 * (unnamed statements) and on the generic plan a named statement may switch to after five
 * executions, with statistics gathered while every row was still PENDING (before the rows were
 * claimed, sent or failed, as after a burst) and with none at all (a new database).
 */
import type { SqlExecutor } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase, emptyTable } from '../costDatabase';
import { listEvents, purgeSentEvents } from '../../src/outbox/sql/adminQueries';
import { markEventsFailed, retryEvents } from '../../src/outbox/sql/adminTransition';
import { releaseStuckEvents } from '../../src/outbox/sql/releaseStuck';
import { measureWork } from '../measuring';
import type { PlanKind } from '../planWork';

let t: TestDatabase;
beforeAll(async () => {
  t = await costDatabase('outbox_events');
});
afterAll(async () => {
  await t.drop();
});

type Statistics = 'pending' | 'none';

/**
 * What a group of rows becomes after the analysis: EXPIRED is PROCESSING under a lease that ran
 * out a minute ago (a millisecond apart from claim to claim), PROCESSING one that runs for
 * another hour. SENT rows were published two days ago.
 */
type Becomes = 'PENDING' | 'PROCESSING' | 'EXPIRED' | 'SENT' | 'FAILED';

interface Group {
  /** The rows' event_type, by which a case finds them. */
  readonly tag: string;
  readonly count: number;
  readonly becomes: Becomes;
  /** PROCESSING and EXPIRED rows are spread over this many claim tokens (default 1). */
  readonly claims?: number;
  readonly tenant?: string;
}

/** The rest of the table: `scale` other claims of 500 rows in flight, SENT, FAILED and PENDING rows. */
function surroundings(scale: number): Group[] {
  return [
    { tag: 'cost.in-flight', count: 500 * scale, becomes: 'PROCESSING', claims: scale },
    { tag: 'cost.sent', count: 500 * scale, becomes: 'SENT' },
    { tag: 'cost.failed', count: 200 * scale, becomes: 'FAILED' },
    { tag: 'cost.pending', count: 200 * scale, becomes: 'PENDING' },
  ];
}

const SMALL = 1;
const LARGE = 10;

// The groups in order (so in seq order), all PENDING, created at the same instant.
const INSERT = `
  INSERT INTO outbox_events (id, event_type, payload, max_retries, tenant_id)
  SELECT gen_random_uuid(), g.tag, '{}', 5, g.tenant
  FROM unnest($1::text[], $2::int[], $3::text[]) WITH ORDINALITY AS g(tag, count, tenant, ord),
    generate_series(1, g.count)
  ORDER BY g.ord`;

// Every group to its state, in one statement; a group's claim tokens are md5(tag || n).
const BECOME = `
  UPDATE outbox_events e SET
    status = CASE g.becomes WHEN 'EXPIRED' THEN 'PROCESSING' ELSE g.becomes END,
    claim_token = CASE WHEN g.claimed THEN md5(g.tag || e.seq % g.claims)::uuid END,
    lease_expires_at = CASE g.becomes WHEN 'PROCESSING' THEN now() + interval '1 hour'
      WHEN 'EXPIRED' THEN now() - interval '1 minute' - e.seq % g.claims * interval '1 ms' END,
    claimed_at = CASE WHEN g.claimed THEN now() END,
    claim_count = CASE WHEN g.claimed THEN 1 ELSE 0 END,
    published_at = CASE g.becomes WHEN 'SENT' THEN now() - interval '2 days' END,
    failed_at = CASE g.becomes WHEN 'FAILED' THEN now() END,
    last_error = CASE g.becomes WHEN 'FAILED' THEN 'cost' END
  FROM (SELECT u.*, u.becomes IN ('PROCESSING', 'EXPIRED') AS claimed
        FROM unnest($1::text[], $2::text[], $3::int[]) AS u(tag, becomes, claims)) g
  WHERE e.event_type = g.tag AND g.becomes <> 'PENDING'`;

/** A table of `groups` under `statistics`. */
async function populate(groups: readonly Group[], statistics: Statistics): Promise<void> {
  await emptyTable(t.db, 'outbox_events', statistics === 'none');
  await t.db.execute(INSERT, [
    groups.map((g) => g.tag),
    groups.map((g) => g.count),
    groups.map((g) => g.tenant ?? null),
  ]);
  if (statistics === 'pending') await t.db.execute('ANALYZE outbox_events');
  await t.db.execute(BECOME, [
    groups.map((g) => g.tag),
    groups.map((g) => g.becomes),
    groups.map((g) => g.claims ?? 1),
  ]);
}

async function idsOf(tag: string): Promise<string[]> {
  const rows = await t.db.query<{ id: string }>(
    'SELECT id::text AS id FROM outbox_events WHERE event_type = $1 ORDER BY seq',
    [tag],
  );
  return rows.map((r) => r.id);
}

/** The claim token of a group of one claim. */
async function tokenOf(tag: string): Promise<string> {
  const [row] = await t.db.query<{ token: string }>(
    'SELECT claim_token::text AS token FROM outbox_events WHERE event_type = $1 LIMIT 1',
    [tag],
  );
  return row!.token;
}

/** Runs `run` on an executor that measures the work of its statements under `plan`. */
function measure<T>(
  plan: PlanKind,
  run: (db: SqlExecutor) => Promise<T>,
): Promise<{ work: number; result: T }> {
  return measureWork(t.url, t.db, plan, run);
}

/** Ten times the rest of the table: the same work, give or take a B-tree level. */
function expectFlat(small: { work: number }, large: { work: number }): void {
  expect(large.work).toBeLessThan(small.work * 1.5);
}

/** Five times the batch: about five times the work, never the batch squared. */
function expectLinear(small: { work: number }, large: { work: number }): void {
  expect(large.work).toBeLessThan(small.work * 5 * 1.5);
}

const PLANS: PlanKind[] = ['custom', 'generic'];
const STATISTICS: Statistics[] = ['pending', 'none'];

/**
 * Without statistics a custom plan may scan the table instead of probing the primary key for the
 * ids a statement is given: the cheapest plan for a table of unknown size, bounded by the table, and gone once
 * autovacuum analyzes it (the completion, test/outbox/claimCost.test.ts, is measured the same way).
 */
const byIdStatistics = (plan: PlanKind): Statistics[] => (plan === 'generic' ? STATISTICS : ['pending']);

/**
 * Without statistics the planner takes rows of one status for 0.5% of the table, so it may read
 * every row past its LIMIT (every expired lease, every SENT row old enough) and sort them rather
 * than read its partial index in order: once per statement, linear in those rows, never the
 * quadratic rescans these cases found, and gone with the first analysis.
 */
const limitStatistics = (plan: PlanKind, noneOnGeneric: boolean): Statistics[] =>
  plan === 'generic' && noneOnGeneric ? STATISTICS : ['pending'];

/** A statement's work, and how many rows it changed or returned. */
interface Measurement {
  readonly work: number;
  readonly done: number;
}

/** `run` at the small and at the large population: `done` rows each time, with the same work. */
function flatCase(
  name: string,
  statistics: readonly Statistics[],
  done: number,
  run: (large: boolean, statistics: Statistics) => Promise<Measurement>,
): void {
  it.each(statistics)(
    `${name} (statistics %s)`,
    async (stats) => {
      const small = await run(false, stats);
      const large = await run(true, stats);
      expect([small.done, large.done]).toEqual([done, done]);
      expectFlat(small, large);
    },
    60_000,
  );
}

/** How a batch of ids is measured: `scale` of the rest of the table, `size` ids. */
type BatchRun = (scale: number, size: number, statistics: Statistics) => Promise<Measurement>;

/** A statement given ids: flat beside 1 or 10 times the rest of the table, linear in its ids. */
function batchCases(plan: PlanKind, run: BatchRun): void {
  flatCase(
    'takes the same work for its 100 rows beside 1 or 10 times the rest of the table',
    byIdStatistics(plan),
    100,
    (large, statistics) => run(large ? LARGE : SMALL, 100, statistics),
  );

  it.each(STATISTICS)(
    'takes about five times the work for 500 rows as for 100 (statistics %s)',
    async (statistics) => {
      const small = await run(SMALL, 100, statistics);
      const large = await run(SMALL, 500, statistics);
      expect([small.done, large.done]).toEqual([100, 500]);
      expectLinear(small, large);
    },
    60_000,
  );
}

/** Recovery (every tenth relay cycle, on every relay) of `expired` rows, at most 100. */
async function recovery(
  scale: number,
  expired: number,
  statistics: Statistics,
  plan: PlanKind,
): Promise<Measurement> {
  await populate(
    [...surroundings(scale), { tag: 'cost.expired', count: expired, becomes: 'EXPIRED', claims: expired }],
    statistics,
  );
  const { work, result } = await measure(plan, (db) => relayStore(db).recover({ limit: 100, maxClaims: 5 }));
  return { work, done: result.requeued };
}

/** Release (or renewal) of `size` rows of one claim, by id. */
async function ownClaim(
  scale: number,
  size: number,
  statistics: Statistics,
  plan: PlanKind,
  action: 'release' | 'renew',
): Promise<Measurement> {
  await populate(
    [...surroundings(scale), { tag: 'cost.own', count: size, becomes: 'PROCESSING' }],
    statistics,
  );
  const token = await tokenOf('cost.own');
  const ids = await idsOf('cost.own');
  const { work, result } = await measure(plan, (db) =>
    action === 'release'
      ? relayStore(db).release(token, ids)
      : relayStore(db).renew(token, { leaseMs: 60_000, heartbeatIntervalMs: 10_000 }, ids),
  );
  return { work, done: result };
}

describe.each(PLANS)('relay maintenance cost (%s plans)', (plan) => {
  flatCase(
    'recovers 50 expired leases with the same work beside 1 or 10 other claims and their history',
    STATISTICS,
    50,
    (large, statistics) => recovery(large ? LARGE : SMALL, 50, statistics, plan),
  );

  flatCase(
    'recovers its 100 rows with the same work whether 200 or 2,000 leases expired',
    limitStatistics(plan, true),
    100,
    (large, statistics) => recovery(SMALL, large ? 2_000 : 200, statistics, plan),
  );

  describe.each(['release', 'renew'] as const)('%s of a claim by id', (action) => {
    batchCases(plan, (scale, size, statistics) => ownClaim(scale, size, statistics, plan, action));
  });
});

/** The operator's release of the expired claims (not forced), beside the table at `scale`. */
async function stuckRelease(scale: number, statistics: Statistics, plan: PlanKind): Promise<Measurement> {
  await populate(
    [...surroundings(scale), { tag: 'cost.expired', count: 50, becomes: 'EXPIRED', claims: 50 }],
    statistics,
  );
  const { work, result } = await measure(plan, (db) =>
    releaseStuckEvents(db, { tenantId: null, claimToken: null, force: false, limit: 1_000 }),
  );
  return { work, done: result.length };
}

/** Retry of `size` FAILED rows (or mark-failed of `size` PENDING ones), beside the table at `scale`. */
async function transition(
  scale: number,
  size: number,
  statistics: Statistics,
  plan: PlanKind,
  action: 'retry' | 'mark-failed',
): Promise<Measurement> {
  const becomes = action === 'retry' ? 'FAILED' : 'PENDING';
  await populate([...surroundings(scale), { tag: 'cost.target', count: size, becomes }], statistics);
  const ids = await idsOf('cost.target');
  const { work, result } = await measure(plan, (db) =>
    action === 'retry' ? retryEvents(db, ids, null) : markEventsFailed(db, ids, null, 'cost'),
  );
  return { work, done: [...result.values()].filter((outcome) => outcome === 'applied').length };
}

/** A purge of 100 SENT rows published before yesterday, beside the table at `scale`. */
async function purge(scale: number, statistics: Statistics, plan: PlanKind): Promise<Measurement> {
  await populate(surroundings(scale), statistics);
  const before = new Date(Date.now() - 24 * 3_600_000);
  const { work, result } = await measure(plan, (db) =>
    purgeSentEvents(db, { tenantId: null, before, limit: 100 }),
  );
  return { work, done: result };
}

/**
 * A page of 50 rows (`tenant` a's first page, or the page after `after`), counted in `done` when
 * of the group `tag`.
 */
async function page(
  plan: PlanKind,
  tag: string,
  tenantId: string | null,
  after: { us: string; seq: string } | null,
): Promise<Measurement> {
  const args = { tenantId, status: null, type: null, key: null, createdBefore: null, after, limit: 50 };
  const { work, result } = await measure(plan, (db) => listEvents(db, args));
  return { work, done: result.filter((row) => row.event_type === tag).length };
}

/** The first page of tenant a's 100 rows, listed beside newer rows of no tenant at `scale`. */
async function tenantList(scale: number, statistics: Statistics, plan: PlanKind): Promise<Measurement> {
  await populate(
    [{ tag: 'cost.tenant', count: 100, becomes: 'SENT', tenant: 'a' }, ...surroundings(scale)],
    statistics,
  );
  return page(plan, 'cost.tenant', 'a', null);
}

/**
 * The page after the newest of 100 older rows (the cursor), the rest of the table at `scale` newer
 * than the cursor: every row of the earlier pages.
 */
async function laterPage(scale: number, statistics: Statistics, plan: PlanKind): Promise<Measurement> {
  await populate([{ tag: 'cost.page', count: 100, becomes: 'SENT' }, ...surroundings(scale)], statistics);
  const [after] = await t.db.query<{ us: string; seq: string }>(
    `SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS us, seq::text AS seq
     FROM outbox_events WHERE event_type = 'cost.page' ORDER BY seq DESC LIMIT 1`,
  );
  return page(plan, 'cost.page', null, after!);
}

describe.each(PLANS)('operator statement cost (%s plans)', (plan) => {
  const scaled =
    (run: (scale: number, statistics: Statistics, plan: PlanKind) => Promise<Measurement>) =>
    (large: boolean, statistics: Statistics) =>
      run(large ? LARGE : SMALL, statistics, plan);

  flatCase(
    'releases 50 stuck claims with the same work beside 1 or 10 live claims and their history',
    STATISTICS,
    50,
    scaled(stuckRelease),
  );

  describe.each(['retry', 'mark-failed'] as const)('%s', (action) => {
    batchCases(plan, (scale, size, statistics) => transition(scale, size, statistics, plan, action));
  });

  flatCase(
    'purges 100 SENT rows with the same work whether 500 or 5,000 are old enough',
    limitStatistics(plan, false),
    100,
    scaled(purge),
  );

  flatCase(
    "lists a tenant's first page with the same work beside 1 or 10 times newer rows of no tenant",
    STATISTICS,
    50,
    scaled(tenantList),
  );

  // Without statistics a generic plan takes the cursor's bound to keep a third of the table and
  // scans it all, sorting for the page: bounded by the table, gone with the first analysis.
  flatCase(
    'lists the page after a cursor with the same work beside 1 or 10 times the rows of earlier pages',
    plan === 'custom' ? STATISTICS : ['pending'],
    50,
    scaled(laterPage),
  );
});
