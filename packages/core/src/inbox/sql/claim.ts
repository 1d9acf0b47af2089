import type { SqlExecutor } from '../../sql/executor';
import type { ClaimedReceipt } from '../types';
import { CLAIMED_COLUMNS, TABLE, toClaimed, type ClaimedRow } from './fragments';

/**
 * Claims up to $2 due receipts of the consumers $1 under one new claim token: due PENDING /
 * RETRYABLE rows, and PROCESSING rows whose lease expired (an abandoned claim) that still
 * have budget. The claim consumes an attempt before any handler runs.
 *
 * Fairness: due work is taken by due time across all the consumers, earliest first. Each
 * consumer's earliest due rows come from the (consumer, next_attempt_at) index (the LATERAL
 * reads at most $2 per consumer), and the earliest $2 of those are claimed, so a backlog on
 * one consumer delays another only by the work that became due before it. Rows a consumer
 * read but the outer LIMIT left unclaimed are unlocked when the statement ends.
 *
 * The claimed rows are looked up by primary key (`id = ANY (ARRAY(...))`, an index probe per
 * id), never by joining `due` against the table: with statistics from before the rows arrived
 * the planner hash-joined it against a sequential scan of the whole table, completed history
 * included, a cost that grew with the table (as the outbox claim found, claimBatch.ts).
 *
 * It commits durably, unlike the relay's claim (leaseCommit.ts): the handler runs under it before
 * anything else commits, so a claim a PostgreSQL crash forgot would give the handler a run its
 * attempts never counted (worker.maxAttempts bounds handler runs, crashes included; review 69).
 *
 * The budget is the claiming worker's $4 (worker.maxAttempts), not the one the accepting inbox
 * wrote: an abandoned claim is taken again while its attempts are below it, and the claim writes
 * it into max_attempts, so the handler's context, its failure (process.ts deadReason) and the
 * admin read the budget in force (review 83). exhaustExpired sweeps what is at or past it.
 */
export const CLAIM_SQL = `
  WITH fresh AS (
    SELECT d.id FROM unnest($1::text[]) AS o(consumer)
    CROSS JOIN LATERAL (
      SELECT id, next_attempt_at FROM ${TABLE}
      WHERE consumer = o.consumer AND status IN ('PENDING', 'RETRYABLE') AND next_attempt_at <= now()
      ORDER BY next_attempt_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ) AS d
    ORDER BY d.next_attempt_at
    LIMIT $2
  ), abandoned AS (
    SELECT id FROM ${TABLE}
    WHERE consumer = ANY($1::text[]) AND status = 'PROCESSING' AND lease_expires_at <= now()
      AND attempts < $4::int
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT id FROM abandoned UNION ALL SELECT id FROM fresh LIMIT $2
  )
  UPDATE ${TABLE} AS r
  SET status = 'PROCESSING', claim_token = gen_random_uuid(),
      lease_expires_at = now() + $3::int * interval '1 millisecond',
      attempts = r.attempts + 1, lifetime_attempts = r.lifetime_attempts + 1, max_attempts = $4::int,
      row_version = r.row_version + 1, updated_at = now()
  WHERE r.id = ANY (ARRAY(SELECT id FROM due))
  RETURNING ${CLAIMED_COLUMNS}`;

export async function claimReceipts(
  db: SqlExecutor,
  consumers: readonly string[],
  limit: number,
  leaseMs: number,
  maxAttempts: number,
): Promise<ClaimedReceipt[]> {
  if (limit <= 0 || consumers.length === 0) return [];
  const rows = await db.query<ClaimedRow>(CLAIM_SQL, [consumers, limit, leaseMs, maxAttempts]);
  return rows.map(toClaimed);
}
