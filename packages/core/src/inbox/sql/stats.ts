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
  /** PROCESSING receipts whose lease expired (a dead worker's claims; see admin release()). */
  readonly expiredLeases: number;
}

const COUNTS = `
  SELECT status, count(*)::float8 AS n FROM ${TABLE}
  WHERE ($1::text IS NULL OR scope = $1) GROUP BY status`;
const OLDEST = `
  SELECT min(created_at) AS oldest,
         (extract(epoch FROM now() - min(created_at)) * 1000)::float8 AS age_ms,
         count(*) FILTER (WHERE status = 'PROCESSING' AND lease_expires_at <= now())::float8 AS expired
  FROM ${TABLE}
  WHERE ($1::text IS NULL OR scope = $1) AND status IN ('PENDING', 'RETRYABLE', 'PROCESSING')`;

function zeroCounts(): Record<InboxStatus, number> {
  return Object.fromEntries(INBOX_STATUSES.map((s) => [s, 0])) as Record<InboxStatus, number>;
}

export async function readStats(db: SqlExecutor, scope: string | null): Promise<InboxStats> {
  const rows = await db.query<{ status: InboxStatus; n: number }>(COUNTS, [scope]);
  const counts = zeroCounts();
  for (const row of rows) counts[row.status] = Number(row.n);
  const [oldest] = await db.query<{ oldest: Date | null; age_ms: number | null; expired: number }>(OLDEST, [
    scope,
  ]);
  return {
    counts,
    total: Object.values(counts).reduce((a, b) => a + b, 0),
    oldestPendingAt: oldest?.oldest ? new Date(oldest.oldest) : null,
    oldestPendingAgeMs:
      oldest?.age_ms === null || oldest?.age_ms === undefined ? null : Math.round(Number(oldest.age_ms)),
    expiredLeases: Number(oldest?.expired ?? 0),
  };
}

/** Receipts of one consumer (and tenant, when grouped by tenant) by status. */
export interface InboxGroupStats {
  readonly consumer: string;
  /** '' for global receipts, or when not grouped by tenant. */
  readonly tenant: string;
  readonly counts: Readonly<Record<InboxStatus, number>>;
  /** Age of the oldest PENDING / RETRYABLE / PROCESSING receipt on the database clock; null when none. */
  readonly oldestUnfinishedAgeMs: number | null;
  readonly expiredLeases: number;
}

const BY_CONSUMER = `
  SELECT consumer, CASE WHEN $1::boolean THEN coalesce(tenant_id, '') ELSE '' END AS tenant, status,
         count(*)::float8 AS n,
         (extract(epoch FROM now() - min(created_at)) * 1000)::float8 AS oldest_ms,
         count(*) FILTER (WHERE status = 'PROCESSING' AND lease_expires_at <= now())::float8 AS expired
  FROM ${TABLE} GROUP BY 1, 2, 3`;

const UNFINISHED: ReadonlySet<InboxStatus> = new Set(['PENDING', 'RETRYABLE', 'PROCESSING']);

/** Every scope's receipts per consumer (and per tenant when `byTenant`); one query. */
export async function readStatsByConsumer(db: SqlExecutor, byTenant: boolean): Promise<InboxGroupStats[]> {
  const rows = await db.query<{
    consumer: string;
    tenant: string;
    status: InboxStatus;
    n: number;
    oldest_ms: number;
    expired: number;
  }>(BY_CONSUMER, [byTenant]);
  const groups = new Map<string, GroupAccumulator>();
  for (const row of rows) {
    const key = JSON.stringify([row.consumer, row.tenant]);
    const group = groups.get(key) ?? {
      consumer: row.consumer,
      tenant: row.tenant,
      counts: zeroCounts(),
      oldest: null,
      expired: 0,
    };
    groups.set(key, group);
    group.counts[row.status] = Number(row.n);
    group.expired += Number(row.expired);
    if (UNFINISHED.has(row.status))
      group.oldest = Math.max(group.oldest ?? 0, Math.round(Number(row.oldest_ms)));
  }
  return [...groups.values()].map(({ oldest, expired, ...group }) => ({
    ...group,
    oldestUnfinishedAgeMs: oldest,
    expiredLeases: expired,
  }));
}

interface GroupAccumulator {
  readonly consumer: string;
  readonly tenant: string;
  readonly counts: Record<InboxStatus, number>;
  oldest: number | null;
  expired: number;
}
