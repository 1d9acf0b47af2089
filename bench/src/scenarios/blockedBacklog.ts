import { randomUUID } from 'node:crypto';
import { type SqlExecutor } from '@ferry/core';
import { relayStore } from '@ferry/core/internal/testing';
import { positiveInteger } from '../env';
import { OutboxBench } from '../outbox';
import type { Sample, Scenario } from '../runner';

/** Rows held back behind one FAILED head ('block' policy); `BENCH_BLOCKED` overrides. */
const BLOCKED = positiveInteger('BENCH_BLOCKED', 200_000);
/** Claims timed per run (the statement before 0004 takes seconds each here); `BENCH_CLAIMS` overrides. */
const CLAIMS = positiveInteger('BENCH_CLAIMS', 5);
const OTHER_KEYS = 200;
/** Rows per claim, as issue 12 measures it (not the relay's default batch); `BENCH_CLAIM_LIMIT` overrides. */
const CLAIM_LIMIT = positiveInteger('BENCH_CLAIM_LIMIT', 100);
const LEASE_MS = 600_000;

/**
 * The claim statement as it was before migration 0004 (kept here only as the baseline): a scan of
 * every due row in due order with a per-row ordering subquery, so the rows of a blocked key are
 * walked on every claim.
 */
const CLAIM_BEFORE = `
  WITH candidates AS (
    SELECT c.id FROM outbox_events c
    WHERE c.status = 'PENDING' AND c.next_attempt_at <= now()
      AND (c.ordering_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM outbox_events p
        WHERE p.ordering_key = c.ordering_key AND p.seq < c.seq AND p.status = ANY($4::text[])))
    ORDER BY c.next_attempt_at, c.seq
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  )
  UPDATE outbox_events e
  SET status = 'PROCESSING', claim_token = $2::uuid, lease_expires_at = now() + ($3::bigint * interval '1 millisecond'),
      claimed_at = now(), claim_count = e.claim_count + 1, updated_at = now()
  FROM candidates WHERE e.id = candidates.id
  RETURNING e.id::text AS id`;

const BLOCKING = ['PENDING', 'PROCESSING', 'FAILED'];

/** `BLOCKED` rows of key 'hot' whose head is FAILED, inserted first (so they are due first). */
async function seedBlockedKey(db: SqlExecutor): Promise<void> {
  await db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, ordering_key, max_retries)
     SELECT gen_random_uuid(), 'bench.hot', jsonb_build_object('n', n), 'hot', 5
     FROM generate_series(1, $1::int) AS n`,
    [BLOCKED],
  );
  await db.execute(
    `UPDATE outbox_events SET status = 'FAILED', failed_at = now(), last_error = 'bench: blocked head'
     WHERE seq = (SELECT min(seq) FROM outbox_events WHERE ordering_key = 'hot')`,
  );
}

/** Replaces the other keys' rows with `n` fresh PENDING events over OTHER_KEYS keys (not timed). */
async function seedOtherKeys(db: SqlExecutor, n: number): Promise<void> {
  await db.execute(`DELETE FROM outbox_events WHERE ordering_key <> 'hot'`);
  await db.execute(
    `INSERT INTO outbox_events (id, event_type, payload, ordering_key, max_retries)
     SELECT gen_random_uuid(), 'bench.other', jsonb_build_object('n', n), 'key-' || (n % $2::int), 5
     FROM generate_series(1, $1::int) AS n`,
    [n, OTHER_KEYS],
  );
  await db.execute('ANALYZE outbox_events');
}

/**
 * Claims batches of CLAIM_LIMIT (at most CLAIMS of them, fewer once the `n` other events are all
 * claimed), timing only the claim statements; after each claim the rows are marked SENT (not timed)
 * so their keys' next events become claimable. Value: mean ms per claim. Verified: every claim
 * took rows (none of 'hot': it stays blocked).
 */
async function claimAll(
  db: SqlExecutor,
  n: number,
  claim: (token: string) => Promise<string[]>,
): Promise<Sample> {
  let claims = 0;
  let claimed = 0;
  let empty = 0;
  let claimMs = 0;
  const started = performance.now();
  while (claimed < n && claims < CLAIMS) {
    const token = randomUUID();
    const before = performance.now();
    const ids = await claim(token);
    claimMs += performance.now() - before;
    claims += 1;
    claimed += ids.length;
    if (ids.length === 0) empty += 1;
    await db.execute(
      `UPDATE outbox_events SET status = 'SENT', published_at = now(), claim_token = NULL,
         lease_expires_at = NULL, claimed_at = NULL WHERE claim_token = $1::uuid`,
      [token],
    );
  }
  const [hot] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox_events WHERE ordering_key = 'hot' AND status = 'PENDING'`,
  );
  return {
    value: claimMs / claims,
    ops: claims,
    elapsedMs: performance.now() - started,
    verified: empty === 0 && hot?.n === BLOCKED - 1,
  };
}

/**
 * Claim cost with a blocked backlog: BLOCKED rows behind one FAILED head (policy 'block'), and
 * N events of 200 other keys, CLAIMS claims timed per run. Subject: ferry's claim (`relayStore(db).claim`);
 * baseline: the claim statement before migration 0004. Lower is better.
 */
export const blockedBacklog: Scenario = {
  name: 'blocked-backlog-claim',
  unit: 'ms/claim',
  better: 'lower',
  targets: [{ on: 'subject', bound: 9.99 }], // issue 12: single-digit ms per claim
  baselineLabel: `claim before 0004, ${BLOCKED} rows blocked behind a FAILED head`,
  subjectLabel: `claim now (due window + key scan), ${BLOCKED} rows blocked`,
  async open() {
    const bench = await OutboxBench.open();
    const db = bench.db;
    try {
      await seedBlockedKey(db);
    } catch (error) {
      await bench.close();
      throw error;
    }
    const store = relayStore(db);
    return {
      async baseline(n) {
        await seedOtherKeys(db, n);
        return claimAll(db, n, async (token) => {
          const rows = await db.query<{ id: string }>(CLAIM_BEFORE, [CLAIM_LIMIT, token, LEASE_MS, BLOCKING]);
          return rows.map((r) => r.id);
        });
      },
      async subject(n) {
        await seedOtherKeys(db, n);
        let laneCursor: string | null = null;
        let keyScanFirst = false;
        return claimAll(db, n, async (token) => {
          const result = await store.claim({
            token,
            limit: CLAIM_LIMIT,
            leaseMs: LEASE_MS,
            failedHead: 'block',
            laneCursor,
            keyScanFirst,
          });
          laneCursor = result.laneCursor ?? null;
          keyScanFirst = result.keyScanFirst ?? false;
          return result.rows.map((r) => r.id);
        });
      },
      close: () => bench.close(),
    };
  },
};
