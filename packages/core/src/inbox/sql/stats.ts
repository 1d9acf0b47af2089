import type { SqlExecutor } from '../../sql/executor';
import { INBOX_STATUSES, type InboxStatus } from '../types';
import { TABLE } from './fragments';

export interface InboxStats {
  readonly counts: Readonly<Record<InboxStatus, number>>;
  readonly total: number;
  /** Creation time of the oldest PENDING / RETRYABLE / PROCESSING receipt. */
  readonly oldestPendingAt: Date | null;
  /** Its age on the database clock, in milliseconds. */
  readonly oldestPendingAgeMs: number | null;
}

const COUNTS = `
  SELECT status, count(*)::int AS n FROM ${TABLE}
  WHERE ($1::text IS NULL OR scope = $1) GROUP BY status`;
const OLDEST = `
  SELECT min(created_at) AS oldest,
         (extract(epoch FROM now() - min(created_at)) * 1000)::float8 AS age_ms
  FROM ${TABLE}
  WHERE ($1::text IS NULL OR scope = $1) AND status IN ('PENDING', 'RETRYABLE', 'PROCESSING')`;

export async function readStats(db: SqlExecutor, scope: string | null): Promise<InboxStats> {
  const rows = await db.query<{ status: InboxStatus; n: number }>(COUNTS, [scope]);
  const counts = Object.fromEntries(INBOX_STATUSES.map((s) => [s, 0])) as Record<InboxStatus, number>;
  for (const row of rows) counts[row.status] = Number(row.n);
  const [oldest] = await db.query<{ oldest: Date | null; age_ms: number | null }>(OLDEST, [scope]);
  return {
    counts,
    total: Object.values(counts).reduce((a, b) => a + b, 0),
    oldestPendingAt: oldest?.oldest ? new Date(oldest.oldest) : null,
    oldestPendingAgeMs:
      oldest?.age_ms === null || oldest?.age_ms === undefined ? null : Math.round(Number(oldest.age_ms)),
  };
}
