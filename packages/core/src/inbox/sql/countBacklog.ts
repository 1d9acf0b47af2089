import type { SqlExecutor } from '../../sql/executor';
import { TABLE } from './fragments';

/** Counts unfinished receipts, stopping at `limit` so the cost stays bounded. */
const SQL = `
  SELECT count(*)::int AS n FROM (
    SELECT 1 FROM ${TABLE} WHERE status IN ('PENDING', 'RETRYABLE', 'PROCESSING') LIMIT $1
  ) AS backlog`;

export async function countBacklog(db: SqlExecutor, limit: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(SQL, [limit]);
  return Number(row?.n ?? 0);
}
