import type { SqlExecutor } from '../../sql/executor';
import { TABLE } from './fragments';

/**
 * Abandoned claims (expired lease) whose retry-cycle budget is spent become DEAD: the crash
 * consumed the last attempt. The budget is the sweeping worker's $3 (worker.maxAttempts), the
 * one its claim takes such a row under (claim.ts): every expired claim is either claimed again
 * or swept, by the same worker. Returns the ids made DEAD.
 */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'DEAD', dead_at = now(), claim_token = NULL, lease_expires_at = NULL,
      last_error = coalesce(last_error || ' | ', '') || 'attempts exhausted: the last claim expired without completing',
      row_version = row_version + 1, updated_at = now()
  WHERE id IN (
    SELECT id FROM ${TABLE}
    WHERE consumer = ANY($1::text[]) AND status = 'PROCESSING'
      AND lease_expires_at <= now() AND attempts >= $3::int
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  RETURNING id, consumer, attempts`;

export async function exhaustExpired(
  db: SqlExecutor,
  consumers: readonly string[],
  limit: number,
  maxAttempts: number,
): Promise<Array<{ id: string; consumer: string; attempts: number }>> {
  if (consumers.length === 0) return [];
  return db.query(SQL, [consumers, limit, maxAttempts]);
}
