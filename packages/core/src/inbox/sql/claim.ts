import type { SqlExecutor } from '../../sql/executor';
import type { ClaimedReceipt } from '../types';
import { COLUMNS, TABLE, toClaimed, type ReceiptRow } from './fragments';

/**
 * Claims up to $2 due receipts of the consumers $1 under one new claim token: due PENDING /
 * RETRYABLE rows, and PROCESSING rows whose lease expired (an abandoned claim) that still
 * have budget. The claim consumes an attempt before any handler runs.
 */
const SQL = `
  WITH fresh AS (
    SELECT id FROM ${TABLE}
    WHERE consumer = ANY($1::text[]) AND status IN ('PENDING', 'RETRYABLE') AND next_attempt_at <= now()
    ORDER BY consumer, next_attempt_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ), abandoned AS (
    SELECT id FROM ${TABLE}
    WHERE consumer = ANY($1::text[]) AND status = 'PROCESSING' AND lease_expires_at <= now()
      AND attempts < max_attempts
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT id FROM abandoned UNION ALL SELECT id FROM fresh LIMIT $2
  )
  UPDATE ${TABLE} AS r
  SET status = 'PROCESSING', claim_token = gen_random_uuid(),
      lease_expires_at = now() + $3::int * interval '1 millisecond',
      attempts = r.attempts + 1, lifetime_attempts = r.lifetime_attempts + 1,
      row_version = r.row_version + 1, updated_at = now()
  FROM due WHERE r.id = due.id
  RETURNING ${COLUMNS.replace(/(^|,)\s*/g, '$1 r.')}`;

export async function claimReceipts(
  db: SqlExecutor,
  consumers: readonly string[],
  limit: number,
  leaseMs: number,
): Promise<ClaimedReceipt[]> {
  if (limit <= 0 || consumers.length === 0) return [];
  const rows = await db.query<ReceiptRow>(SQL, [consumers, limit, leaseMs]);
  return rows.map(toClaimed);
}
