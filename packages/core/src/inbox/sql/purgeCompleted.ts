import type { SqlExecutor } from '../../sql/executor';
import { TABLE } from './fragments';

/**
 * Drops the payload of at most $3 COMPLETED receipts completed before $2 in scope $1.
 * Identity, fingerprint, headers and replay lineage stay, so redeliveries still deduplicate.
 */
const SQL = `
  UPDATE ${TABLE}
  SET payload = NULL, payload_purged_at = now(), row_version = row_version + 1, updated_at = now()
  WHERE id IN (
    SELECT id FROM ${TABLE}
    WHERE scope = $1 AND status = 'COMPLETED' AND payload IS NOT NULL AND completed_at < $2::timestamptz
    ORDER BY completed_at
    LIMIT $3
    FOR UPDATE SKIP LOCKED
  )`;

export async function purgeCompleted(
  db: SqlExecutor,
  scope: string,
  before: Date,
  limit: number,
): Promise<number> {
  return db.execute(SQL, [scope, before.toISOString(), limit]);
}
