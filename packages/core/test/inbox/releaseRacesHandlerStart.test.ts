/**
 * An operator's forced release racing the start of a handler transaction (review: operator plane,
 * item 5). The release takes a claim only if it gets the receipt's advisory lock exclusively; the
 * handler transaction's first statement (beginHandler) takes it shared and proves its claim alive.
 * Whatever the interleaving, the handler's writes of the released claim must never commit and the
 * receipt must be applied once (its completion is fenced by claim token and lease).
 *
 * Three interleavings, each forced:
 * - the handler transaction has begun and not yet sent its first statement when the release
 *   commits (an adapter holding it after BEGIN);
 * - the release has taken the lock and not committed when the handler's first statement runs
 *   (the release in an open transaction of the caller);
 * - the release commits while the handler's first statement runs, after that statement took its
 *   snapshot and before it took the lock: a gate inside the statement (the worker's connections
 *   resolve `hashtextextended`, which the lock key is computed with, to a function of the test's
 *   that waits on an advisory lock the test holds; pg_catalog is searched after public there).
 */
import { randomUUID } from 'node:crypto';
import { Client, Pool, type PoolClient } from 'pg';
import { listened } from '../../../../test-support/oneStatement';
import {
  InboxAdmin,
  pgTransactions,
  type InboxHandler,
  type SqlExecutor,
  type TransactionAdapter,
} from '@ferry/core';
import { waitUntil } from '@ferry/testing';
import { createTestDatabase, type TestDatabase } from '../../../../test-support/database';
import { gate } from '../../../../test-support/holds';
import { businessCount, createBusinessTable, makeInbox, message, receiptRow } from './helpers';

const GATE_KEY = 4242;
/** The claim tokens the tests released: no business row of theirs may commit. */
const releasedTokens: string[] = [];

let t: TestDatabase;
const pools: Pool[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
  await createBusinessTable(t);
  // The gate: waits while the test holds GATE_KEY, for the receipt lock key only.
  await t.db.execute(`CREATE FUNCTION public.hashtextextended(t text, seed bigint) RETURNS bigint
    LANGUAGE plpgsql AS $$
    BEGIN
      IF t LIKE 'ferry_inbox_receipt:%' THEN
        PERFORM pg_advisory_lock_shared(${GATE_KEY});
        PERFORM pg_advisory_unlock_shared(${GATE_KEY});
      END IF;
      RETURN pg_catalog.hashtextextended(t, seed);
    END $$`);
});
afterAll(async () => {
  await Promise.allSettled(pools.map((pool) => pool.end()));
  await t.drop();
});

function workerPool(searchPath = 'pg_catalog,public'): Pool {
  const pool = new Pool({ connectionString: t.url, max: 6, options: `-c search_path=${searchPath}` });
  pool.on('error', () => undefined);
  pools.push(pool);
  return pool;
}

/**
 * A handler writing a business row per run, noted with the claim token its transaction runs under
 * (the setting beginHandler makes for the transaction): a row of a released claim is told apart.
 */
function countingHandler(): { handler: InboxHandler<PoolClient>; runs: () => number } {
  let runs = 0;
  const handler: InboxHandler<PoolClient> = async (_payload, context) => {
    runs += 1;
    await context.tx.query(
      `INSERT INTO business_rows (receipt_id, note) VALUES ($1::uuid, current_setting('ferry.inbox_claim', true))`,
      [context.receiptId],
    );
  };
  return { handler, runs: () => runs };
}

/**
 * `inner` whose next handler transaction, once armed, waits after its BEGIN until `open()`;
 * `begun` resolves when it waits, `firstAnswered` when its first statement (beginHandler) answered.
 */
function holdingAfterBegin(inner: TransactionAdapter<PoolClient>) {
  const held = gate();
  const begun = gate();
  const firstAnswered = gate();
  let armed = true;
  const adapter: TransactionAdapter<PoolClient> = {
    db: inner.db,
    transaction: (work, options) =>
      inner.transaction(async (tx) => {
        if (armed) {
          armed = false;
          begun.open();
          await held.promise;
          let first = true;
          const bind = inner.bind.bind(inner);
          const watched = bind(tx);
          const wrapped: SqlExecutor = {
            inTransaction: watched.inTransaction,
            query: async (text, values, statement) => {
              try {
                return await watched.query(text, values, statement);
              } finally {
                if (first) {
                  first = false;
                  firstAnswered.open();
                }
              }
            },
            execute: (text, values, statement) => watched.execute(text, values, statement),
            transaction: (w, o) => watched.transaction(w, o),
          };
          boundOnce.set(tx, wrapped);
        }
        return work(tx);
      }, options),
    bind: (tx) => boundOnce.get(tx) ?? inner.bind(tx),
  };
  const boundOnce = new Map<PoolClient, SqlExecutor>();
  return { adapter, open: held.open, begun: begun.promise, firstAnswered: firstAnswered.promise };
}

async function forcedRelease(db: ConstructorParameters<typeof InboxAdmin>[0], tenantId: string, id: string) {
  const claimToken = String((await receiptRow(t, id)).claim_token);
  releasedTokens.push(claimToken);
  return new InboxAdmin(db)
    .forTenant(tenantId)
    .release({ claimToken, force: true, actor: 'ops', reason: 'worker looks dead' });
}

/** Runs the inbox until the receipt is COMPLETED. */
async function drain(inbox: { runOnce(): Promise<unknown> }, id: string): Promise<void> {
  await waitUntil(
    'the receipt completes',
    async () => {
      await inbox.runOnce();
      return (await receiptRow(t, id)).status === 'COMPLETED';
    },
    { timeoutMs: 20_000, intervalMs: 20 },
  );
}

/** The receipt's status, how many business rows committed, and those of a released claim. */
async function outcome(id: string) {
  const rows = await t.db.query<{ note: string }>(
    'SELECT note FROM business_rows WHERE receipt_id = $1::uuid',
    [id],
  );
  return {
    status: (await receiptRow(t, id)).status,
    applied: await businessCount(t, id),
    ofReleasedClaims: rows.filter((r) => releasedTokens.includes(r.note)).length,
  };
}

it('a release committed after the handler transaction began, before its first statement: the handler never runs on the released claim', async () => {
  const tenantId = `t-${randomUUID()}`;
  const { handler, runs } = countingHandler();
  const held = holdingAfterBegin(pgTransactions(workerPool()));
  const inbox = makeInbox(held.adapter, { handlers: { orders: handler } });
  const { record } = await inbox.accept(message({ tenantId }));
  const first = inbox.runOnce();
  await held.begun;
  expect(await forcedRelease(t.prisma, tenantId, record.id)).toEqual({ released: [record.id], running: [] });
  held.open();
  await first;
  await drain(inbox, record.id);
  expect({ ...(await outcome(record.id)), runs: runs() }).toEqual({
    status: 'COMPLETED',
    applied: 1,
    ofReleasedClaims: 0,
    runs: 1,
  });
});

it("a release holding the lock, not committed, when the handler's first statement runs: the handler does not start", async () => {
  const tenantId = `t-${randomUUID()}`;
  const { handler, runs } = countingHandler();
  const held = holdingAfterBegin(pgTransactions(workerPool()));
  const inbox = makeInbox(held.adapter, { handlers: { orders: handler } });
  const { record } = await inbox.accept(message({ tenantId }));
  const first = inbox.runOnce();
  await held.begun;
  const operator = listened(new Client({ connectionString: t.url }));
  await operator.connect();
  try {
    await operator.query('BEGIN');
    expect(await forcedRelease(operator, tenantId, record.id)).toEqual({
      released: [record.id],
      running: [],
    });
    held.open();
    await held.firstAnswered;
    await operator.query('COMMIT');
  } finally {
    await operator.end();
  }
  await first;
  await drain(inbox, record.id);
  expect({ ...(await outcome(record.id)), runs: runs() }).toEqual({
    status: 'COMPLETED',
    applied: 1,
    ofReleasedClaims: 0,
    runs: 1,
  });
});

it("a release committed while the handler's first statement runs (after its snapshot, before its lock): its writes never commit, the receipt is applied once", async () => {
  const tenantId = `t-${randomUUID()}`;
  const { handler, runs } = countingHandler();
  const inbox = makeInbox(pgTransactions(workerPool('public,pg_catalog')), {
    handlers: { orders: handler },
  });
  const { record } = await inbox.accept(message({ tenantId }));
  const gatekeeper = listened(new Client({ connectionString: t.url }));
  await gatekeeper.connect();
  try {
    await gatekeeper.query('SELECT pg_advisory_lock($1)', [GATE_KEY]);
    const first = inbox.runOnce();
    await waitUntil(
      "the handler transaction's first statement waits at the gate",
      async () => {
        const [row] = await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1`,
          [GATE_KEY],
        );
        return (row?.n ?? 0) > 0;
      },
      { timeoutMs: 15_000, intervalMs: 20 },
    );
    expect(await forcedRelease(t.prisma, tenantId, record.id)).toEqual({
      released: [record.id],
      running: [],
    });
    await gatekeeper.query('SELECT pg_advisory_unlock($1)', [GATE_KEY]);
    await first;
  } finally {
    await gatekeeper.end();
  }
  await drain(inbox, record.id);
  // The handler may start on the released claim here (its statement read the claim alive in a
  // snapshot from before the release): its completion fails the fence and it rolls back.
  expect({ ...(await outcome(record.id)), startedOnReleasedClaim: runs() === 2 }).toEqual({
    status: 'COMPLETED',
    applied: 1,
    ofReleasedClaims: 0,
    startedOnReleasedClaim: true,
  });
});
