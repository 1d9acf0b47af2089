/**
 * The inbox's statements besides the claim (the handler's fence, the worker's leases, retries and
 * sweeps, the operator's actions, acceptance) do work bounded by their own rows: not by the
 * COMPLETED history, the DEAD receipts or the rows other claims hold in flight; and a batch
 * statement's work grows linearly with its batch. "Work" as in test/inbox/claimCost.test.ts
 * (planWork): rows every plan node produced and filtered out, times its loops; measured on the
 * custom plans of unnamed statements and on the generic plan a named statement (fromPg, or Prisma
 * with ferryStatementNames) may switch to after five executions, with statistics taken before the
 * rows were claimed, completed or failed ('pending') and with none at all ('none').
 */
import { Client } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import type { SqlExecutor } from '@ferry/core';
import { beginHandler } from '../../src/inbox/sql/beginHandler';
import { completeReceipt } from '../../src/inbox/sql/complete';
import { exhaustExpired } from '../../src/inbox/sql/exhaustExpired';
import { RECEIPT_KEYS } from '../../src/inbox/sql/fragments';
import { insertReceipts, type NewReceipt } from '../../src/inbox/sql/insertReceipts';
import { markDead } from '../../src/inbox/sql/markDead';
import { purgeCompleted } from '../../src/inbox/sql/purgeCompleted';
import { readClaimState } from '../../src/inbox/sql/readClaimState';
import { releaseClaims } from '../../src/inbox/sql/releaseClaims';
import { releaseStuckReceipts } from '../../src/inbox/sql/releaseStuck';
import { renewLease } from '../../src/inbox/sql/renewLease';
import { renewQueued } from '../../src/inbox/sql/renewQueued';
import { requeueDead } from '../../src/inbox/sql/requeueDead';
import { scheduleRetry } from '../../src/inbox/sql/scheduleRetry';
import type { TestDatabase } from '../../../../test-support/database';
import { costDatabase, emptyTable } from '../costDatabase';
import { planWork, type PlanKind } from '../planWork';

const SCOPE = 'tenant:acme';
const CONSUMERS = ['c-0', 'c-1', 'c-2', 'c-3'];
/** Rows per claim in flight (ours, and each other claim's). */
const CLAIM_ROWS = 500;
/** The batch a batch statement is measured with, and the larger one its linearity is checked on. */
const BATCH = 100;
const LARGE_BATCH = 500;
/** Claimed rows whose lease expired with no attempt left (exhaustExpired's and releaseStuck's). */
const EXHAUSTED = 20;
/** The handler transaction's limits beginHandler sets. */
const LIMITS = { lockTimeoutMs: 1_000, transactionTimeoutMs: 10_000 };
/** The lease of the renewals measured: a minute, renewed every ten seconds. */
const LEASE = { leaseMs: 60_000, heartbeatIntervalMs: 10_000 };

let t: TestDatabase;
beforeAll(async () => {
  t = await costDatabase('ferry_inbox_receipts');
});
afterAll(() => t.drop());

interface Claim {
  readonly id: string;
  readonly claimToken: string;
}

/** The rows a seeded table holds for the statements to work on. */
interface Seed {
  /** Our claim's rows: PROCESSING under their tokens, leases live. */
  readonly own: readonly Claim[];
  /** A DEAD receipt of SCOPE and its version. */
  readonly dead: { readonly id: string; readonly version: number };
}

/**
 * What grows around the statements' own rows: `history` COMPLETED receipts (half of them in
 * SCOPE, half in another tenant's) with a tenth as many DEAD ones in SCOPE, and `claims` other
 * claims of CLAIM_ROWS rows in flight (PROCESSING, leases live).
 */
interface Scale {
  readonly history: number;
  readonly claims: number;
}

const SCALES = {
  base: { history: 2_000, claims: 1 },
  history: { history: 20_000, claims: 1 },
  claims: { history: 2_000, claims: 13 },
} as const satisfies Record<string, Scale>;
type ScaleName = keyof typeof SCALES;

/** The rows a seed holds in flight: other claims', ours and the exhausted ones. */
function inFlight(scale: Scale): number {
  return (scale.claims + 1) * CLAIM_ROWS + EXHAUSTED;
}

/** 'pending': analyzed while every row was still PENDING (as after a burst); 'none': never analyzed. */
type Statistics = 'pending' | 'none';

/**
 * Every row arrives PENDING, tagged with its role in message_type; statistics are taken (or
 * wiped) then, and the roles' rows move on afterwards: 'history' completed a day ago, 'dead',
 * 'inflight' (other claims) and 'own' claimed with live leases, 'exhausted' claimed with no
 * attempt left and its lease expired (what exhaustExpired and releaseStuck take). Last comes a
 * 'backlog' of PENDING receipts, stored after the rest as new rows are: a sequential scan meets
 * the history first.
 */
async function seed(scale: Scale, statistics: Statistics): Promise<Seed> {
  await emptyTable(t.db, 'ferry_inbox_receipts', statistics === 'none');
  const roles: Array<[string, number]> = [
    ['history', scale.history],
    ['dead', scale.history / 10],
    ['inflight', scale.claims * CLAIM_ROWS],
    ['own', CLAIM_ROWS],
    ['exhausted', EXHAUSTED],
  ];
  const insert = (role: string, rows: number) =>
    t.db.execute(
      `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, message_type, payload,
         payload_fingerprint, payload_bytes, max_attempts, next_attempt_at)
       SELECT CASE WHEN $2::text = 'history' AND g % 2 = 0 THEN 'globex' ELSE 'acme' END,
              CASE $2::text WHEN 'own' THEN 'c-0' WHEN 'exhausted' THEN 'c-1' ELSE 'c-' || (g % 4) END,
              $2::text || '-' || g, $2::text, '{}'::jsonb, 'f', 2, 3, now() - interval '1 hour' + g * interval '1 ms'
       FROM generate_series(1, $1::int) g`,
      [rows, role],
    );
  for (const [role, rows] of roles) await insert(role, rows);
  if (statistics === 'pending') await t.db.execute('ANALYZE ferry_inbox_receipts');
  await t.db.execute(
    `UPDATE ferry_inbox_receipts
     SET status = CASE message_type WHEN 'history' THEN 'COMPLETED' WHEN 'dead' THEN 'DEAD' ELSE 'PROCESSING' END,
         attempts = CASE WHEN message_type IN ('dead', 'exhausted') THEN max_attempts ELSE 1 END,
         lifetime_attempts = CASE WHEN message_type IN ('dead', 'exhausted') THEN max_attempts ELSE 1 END,
         completed_at = CASE WHEN message_type = 'history' THEN next_attempt_at - interval '1 day' END,
         dead_at = CASE WHEN message_type = 'dead' THEN now() END,
         last_error = CASE WHEN message_type = 'dead' THEN 'failed' END,
         claim_token = CASE WHEN message_type IN ('inflight', 'own', 'exhausted') THEN gen_random_uuid() END,
         lease_expires_at = CASE WHEN message_type = 'exhausted' THEN now() - interval '1 minute'
                                 WHEN message_type IN ('inflight', 'own') THEN now() + interval '1 hour' END,
         row_version = row_version + 1`,
  );
  await insert('backlog', 200);
  const own = await t.db.query<Claim>(
    `SELECT id::text AS id, claim_token::text AS "claimToken" FROM ferry_inbox_receipts
     WHERE message_type = 'own' ORDER BY next_attempt_at`,
  );
  const [dead] = await t.db.query<{ id: string; version: number }>(
    `SELECT id::text AS id, row_version AS version FROM ferry_inbox_receipts
     WHERE message_type = 'dead' ORDER BY next_attempt_at LIMIT 1`,
  );
  return { own, dead: dead! };
}

/**
 * `size` receipts for acceptance in SCOPE: the first half new (message ids `tag-i`), the second
 * half redeliveries of history receipts of SCOPE (the odd ones, see seed).
 */
function receipts(size: number, tag: string): NewReceipt[] {
  return Array.from({ length: size }, (_, i) => {
    const g = 2 * (i - size / 2) + 1;
    const fresh = i < size / 2;
    return {
      tenantId: 'acme',
      consumer: fresh ? 'c-0' : `c-${g % 4}`,
      messageId: fresh ? `${tag}-${i}` : `history-${g}`,
      messageType: 'cost',
      system: null,
      payloadJson: '{}',
      fingerprint: 'f',
      payloadBytes: 2,
      headersJson: '{}',
    };
  });
}

/** One measured statement: `send` runs it on `db` for a batch of `size` (when it has a batch). */
interface Case {
  readonly name: string;
  readonly send: (db: SqlExecutor, seed: Seed, size: number) => Promise<unknown>;
  /** Its own batch: measured again with LARGE_BATCH rows. */
  readonly batch?: true;
  /**
   * Reads the rows in flight of its scope, at most once each: what it looks for (an expired
   * lease, a claim token) has no index of its own beside other claims' live leases.
   */
  readonly readsInFlight?: true;
}

const first = (seed: Seed): Claim => seed.own[0]!;

const CASES: readonly Case[] = [
  {
    name: 'beginHandler',
    send: (db, s) => beginHandler(db, first(s), LIMITS),
  },
  // The explainer's session holds the handler claim setting (see measure).
  { name: 'completeReceipt', send: (db, s) => completeReceipt(db, first(s).id, first(s).claimToken) },
  { name: 'renewLease', send: (db, s) => renewLease(db, first(s).id, first(s).claimToken, LEASE) },
  {
    name: 'scheduleRetry',
    send: (db, s) => scheduleRetry(db, first(s).id, first(s).claimToken, 1_000, 'failed'),
  },
  { name: 'markDead', send: (db, s) => markDead(db, first(s).id, first(s).claimToken, 'failed') },
  { name: 'readClaimState', send: (db, s) => readClaimState(db, first(s).id, first(s).claimToken) },
  {
    name: 'renewQueued',
    batch: true,
    send: (db, s, size) => renewQueued(db, s.own.slice(0, size), LEASE),
  },
  { name: 'releaseClaims', batch: true, send: (db, s, size) => releaseClaims(db, s.own.slice(0, size)) },
  { name: 'exhaustExpired', send: (db) => exhaustExpired(db, CONSUMERS, 10, 3) },
  {
    name: 'releaseStuck (expired leases)',
    readsInFlight: true,
    send: (db) => releaseStuckReceipts(db, { scope: SCOPE, claimToken: null, force: false, limit: 10 }),
  },
  {
    name: 'releaseStuck (forced, one claim token)',
    readsInFlight: true,
    send: (db, s) =>
      releaseStuckReceipts(db, { scope: SCOPE, claimToken: first(s).claimToken, force: true, limit: 10 }),
  },
  {
    name: 'requeueDead',
    send: (db, s) => requeueDead(db, SCOPE, s.dead.id, s.dead.version, 'operator', 'cost'),
  },
  { name: 'purgeCompleted', send: (db) => purgeCompleted(db, SCOPE, new Date(), 100) },
  {
    name: 'insertReceipts',
    batch: true,
    send: (db, _s, size) =>
      insertReceipts(db, receipts(size, 'new'), { maxAttempts: 3, maxPendingMessages: null }, RECEIPT_KEYS),
  },
  {
    name: 'insertReceipts (admission limit reached)',
    send: (db) =>
      insertReceipts(db, receipts(BATCH, 'gated'), { maxAttempts: 3, maxPendingMessages: 50 }, RECEIPT_KEYS),
  },
];

/** The statements `send` issues, captured without running them. */
async function statementsOf(
  send: (db: SqlExecutor) => Promise<unknown>,
): Promise<Array<{ text: string; values: readonly unknown[] }>> {
  const sent: Array<{ text: string; values: readonly unknown[] }> = [];
  const recorder: SqlExecutor = {
    inTransaction: false,
    query: async <T>(text: string, values: readonly unknown[] = []): Promise<T[]> => {
      sent.push({ text, values });
      return [];
    },
    execute: async (text: string, values: readonly unknown[] = []) => {
      sent.push({ text, values });
      return 0;
    },
    transaction: (work) => work(recorder),
  };
  await send(recorder);
  return sent;
}

/** Each case's work on `seed` (batch cases also with LARGE_BATCH, as `name xLARGE_BATCH`). */
async function measure(seed: Seed, plan: PlanKind, batches: boolean): Promise<Record<string, number>> {
  const explainer = listened(new Client({ connectionString: t.url }));
  await explainer.connect();
  try {
    // What beginHandler sets in the handler transaction, for completeReceipt's check.
    await explainer.query(`SELECT set_config('ferry.inbox_claim', $1, false)`, [first(seed).claimToken]);
    const work: Record<string, number> = {};
    for (const c of CASES) {
      for (const size of c.batch === true && batches ? [BATCH, LARGE_BATCH] : [BATCH]) {
        let total = 0;
        for (const s of await statementsOf((db) => c.send(db, seed, size))) {
          total += await planWork(explainer, s.text, s.values, plan);
        }
        work[size === BATCH ? c.name : `${c.name} x${size}`] = total;
      }
    }
    return work;
  } finally {
    await explainer.end();
  }
}

const PLANS: PlanKind[] = ['custom', 'generic'];

describe.each(['pending', 'none'] as const)('statistics %s', (statistics) => {
  const figures = new Map<string, number>();
  const figure = (scale: ScaleName, plan: PlanKind, name: string): number => {
    const value = figures.get(`${scale} ${plan} ${name}`);
    if (value === undefined) throw new Error(`not measured: ${scale} ${plan} ${name}`);
    return value;
  };
  let last: Seed;

  beforeAll(async () => {
    for (const scale of Object.keys(SCALES) as ScaleName[]) {
      last = await seed(SCALES[scale], statistics);
      for (const plan of PLANS) {
        const work = await measure(last, plan, scale === 'base');
        for (const [name, value] of Object.entries(work)) figures.set(`${scale} ${plan} ${name}`, value);
      }
    }
    // FERRY_COST_FIGURES=1 prints every figure (for a report).
    if (process.env.FERRY_COST_FIGURES) console.log(statistics, Object.fromEntries(figures));
  }, 120_000);

  describe.each(PLANS)('%s plans', (plan) => {
    it.each(CASES.filter((c) => c.readsInFlight !== true).map((c) => [c.name]))(
      '%s: the same work beside ten times the history and thirteen times the rows in flight',
      (name) => {
        const base = figure('base', plan, name);
        expect(base).toBeGreaterThan(0);
        expect(figure('history', plan, name)).toBeLessThan(base * 1.5);
        expect(figure('claims', plan, name)).toBeLessThan(base * 1.5);
      },
    );

    it.each(CASES.filter((c) => c.readsInFlight === true).map((c) => [c.name]))(
      '%s: the same work beside ten times the history, each row in flight read at most once',
      (name) => {
        const base = figure('base', plan, name);
        expect(base).toBeGreaterThan(0);
        expect(figure('history', plan, name)).toBeLessThan(base * 1.5);
        for (const scale of ['base', 'claims'] as const) {
          expect(figure(scale, plan, name)).toBeLessThan(inFlight(SCALES[scale]) * 1.5);
        }
      },
    );

    it.each(CASES.filter((c) => c.batch === true).map((c) => [c.name]))(
      `%s: ${LARGE_BATCH} rows cost about ${LARGE_BATCH / BATCH} times ${BATCH}`,
      (name) => {
        const ratio = LARGE_BATCH / BATCH;
        expect(figure('base', plan, `${name} x${LARGE_BATCH}`)).toBeLessThan(
          figure('base', plan, name) * ratio * 1.5,
        );
      },
    );
  });

  it('the measured statements reach the rows they were measured on', async () => {
    // Run for real on the last seed: each statement changes (or finds) its target rows.
    const [a, b, c, d, e] = last.own as [Claim, Claim, Claim, Claim, Claim];
    expect(
      await t.db.transaction(async (tx) =>
        (await beginHandler(tx, a, LIMITS)).owned ? completeReceipt(tx, a.id, a.claimToken) : 'not begun',
      ),
    ).toBe('completed');
    expect(await renewLease(t.db, b.id, b.claimToken, LEASE)).toBe(true);
    expect(await scheduleRetry(t.db, c.id, c.claimToken, 1_000, 'failed')).toBe(true);
    expect(await markDead(t.db, d.id, d.claimToken, 'failed')).toBe(true);
    expect(await readClaimState(t.db, e.id, e.claimToken)).toBe('owned');
    const queued = last.own.slice(10, 10 + BATCH);
    expect((await renewQueued(t.db, queued, LEASE)).size).toBe(BATCH);
    expect(await releaseClaims(t.db, queued)).toHaveLength(BATCH);
    expect(await exhaustExpired(t.db, CONSUMERS, 10, 3)).toHaveLength(10);
    // Of the other ten exhausted rows, still PROCESSING with their leases expired, its limit.
    expect(
      (await releaseStuckReceipts(t.db, { scope: SCOPE, claimToken: null, force: false, limit: 5 })).released,
    ).toHaveLength(5);
    const forced = last.own[200]!;
    expect(
      await releaseStuckReceipts(t.db, {
        scope: SCOPE,
        claimToken: forced.claimToken,
        force: true,
        limit: 10,
      }),
    ).toEqual({ released: [forced.id], running: [] });
    expect(
      await requeueDead(t.db, SCOPE, last.dead.id, last.dead.version, 'operator', 'cost'),
    ).not.toBeNull();
    expect(await purgeCompleted(t.db, SCOPE, new Date(), 100)).toBe(100);
    const accepted = await insertReceipts(
      t.db,
      receipts(BATCH, 'new'),
      { maxAttempts: 3, maxPendingMessages: null },
      RECEIPT_KEYS,
    );
    expect([accepted.inserted.length, accepted.existing.length]).toEqual([BATCH / 2, BATCH / 2]);
    const gated = await insertReceipts(
      t.db,
      receipts(BATCH, 'gated'),
      { maxAttempts: 3, maxPendingMessages: 50 },
      RECEIPT_KEYS,
    );
    expect(gated.admitted).toBe(false);
  });
});
