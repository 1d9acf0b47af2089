import { FerryValidationError } from '../errors';
import type { SqlExecutor } from '../sql/executor';
import type { OutboxRecord, OutboxStatus } from './record';
import { eventStats, getEvent, listEvents, purgeSentEvents } from './sql/adminQueries';
import { markEventsFailed, retryEvents, type AdminOutcome } from './sql/adminTransition';
import { dbCall } from './errors';
import { toRecord } from './sql/fragments';

export type { AdminOutcome };
export interface AdminResult {
  readonly id: string;
  readonly outcome: AdminOutcome;
}

export interface OutboxStats {
  readonly pending: number;
  readonly processing: number;
  readonly sent: number;
  readonly failed: number;
  /** PROCESSING rows whose lease already expired (recovery will requeue them). */
  readonly expiredLeases: number;
  /** Age of the oldest PENDING row by the database clock; null when none is pending. */
  readonly oldestPendingAgeMs: number | null;
}

export interface HealthThresholds {
  /** Default 300,000 ms. */
  maxOldestPendingAgeMs?: number;
  /** Default 0: any FAILED row makes the outbox unhealthy. */
  maxFailed?: number;
  /** Default 0. */
  maxExpiredLeases?: number;
}

export interface OutboxHealth {
  readonly healthy: boolean;
  /** One line per threshold exceeded. */
  readonly problems: readonly string[];
  readonly stats: OutboxStats;
}

export interface ListQuery {
  status?: OutboxStatus;
  type?: string;
  /** Default 50, at most 1,000. */
  limit?: number;
  /** The opaque `nextCursor` of the previous page. */
  cursor?: string;
}

export interface OutboxAdmin {
  retry(id: string): Promise<AdminResult>;
  retryMany(ids: readonly string[]): Promise<AdminResult[]>;
  markFailed(id: string, reason: string): Promise<AdminResult>;
  get(id: string): Promise<OutboxRecord | null>;
  list(query?: ListQuery): Promise<{ items: OutboxRecord[]; nextCursor: string | null }>;
  stats(): Promise<OutboxStats>;
  health(thresholds?: HealthThresholds): Promise<OutboxHealth>;
  /** Deletes at most `limit` (default 1,000, at most 10,000) SENT rows published before `before`. */
  purgeSent(args: { before: Date; limit?: number }): Promise<{ deleted: number }>;
}

export interface OperatorOutboxAdmin extends OutboxAdmin {
  /** The same API, fixed to one tenant: other tenants' rows read as not_found / absent. */
  forTenant(tenantId: string): OutboxAdmin;
}

const STATUSES = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'];

function bounded(field: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new FerryValidationError(field, `must be an integer between 1 and ${max}`);
  }
  return value;
}

function encodeCursor(us: string, seq: string): string {
  return Buffer.from(JSON.stringify([us, seq])).toString('base64url');
}

function decodeCursor(cursor: string): { us: string; seq: string } {
  try {
    const [us, seq] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof us === 'string' && typeof seq === 'string' && /^-?\d+$/.test(us) && /^\d+$/.test(seq)) {
      return { us, seq };
    }
  } catch {
    // fall through to the typed error
  }
  throw new FerryValidationError('cursor', 'not a cursor returned by list()');
}

function outcomeOf(map: Map<string, AdminOutcome>, id: string): AdminResult {
  return { id, outcome: map.get(id.toLowerCase()) ?? 'not_found' };
}

/** One scope: every tenant (`tenantId` null) or a fixed tenant. */
class ScopedOutboxAdmin implements OutboxAdmin {
  constructor(
    private readonly db: SqlExecutor,
    private readonly tenantId: string | null,
  ) {}

  async retry(id: string): Promise<AdminResult> {
    return outcomeOf(await dbCall('retry', () => retryEvents(this.db, [id], this.tenantId)), id);
  }

  async retryMany(ids: readonly string[]): Promise<AdminResult[]> {
    bounded('ids.length', ids.length, 1, 1_000);
    const outcomes = await dbCall('retryMany', () => retryEvents(this.db, ids, this.tenantId));
    return ids.map((id) => outcomeOf(outcomes, id));
  }

  async markFailed(id: string, reason: string): Promise<AdminResult> {
    if (typeof reason !== 'string' || reason.trim() === '' || reason.length > 4_000) {
      throw new FerryValidationError('reason', 'must be a non-empty string of at most 4,000 characters');
    }
    return outcomeOf(
      await dbCall('markFailed', () => markEventsFailed(this.db, [id], this.tenantId, reason)),
      id,
    );
  }

  async get(id: string): Promise<OutboxRecord | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    const row = await dbCall('get', () => getEvent(this.db, this.tenantId, id));
    return row ? toRecord(row) : null;
  }

  async list(query: ListQuery = {}): Promise<{ items: OutboxRecord[]; nextCursor: string | null }> {
    if (query.status !== undefined && !STATUSES.includes(query.status)) {
      throw new FerryValidationError('status', `must be one of ${STATUSES.join(', ')}`);
    }
    const limit = bounded('limit', query.limit, 50, 1_000);
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const rows = await dbCall('list', () =>
      listEvents(this.db, {
        tenantId: this.tenantId,
        status: query.status ?? null,
        type: query.type ?? null,
        after,
        limit,
      }),
    );
    const last = rows[rows.length - 1];
    return {
      items: rows.map(toRecord),
      nextCursor: rows.length === limit && last ? encodeCursor(last.created_us, last.seq) : null,
    };
  }

  async stats(): Promise<OutboxStats> {
    const row = await dbCall('stats', () => eventStats(this.db, this.tenantId));
    return {
      pending: row.pending,
      processing: row.processing,
      sent: row.sent,
      failed: row.failed,
      expiredLeases: row.expired_leases,
      oldestPendingAgeMs: row.oldest_pending_ms === null ? null : Number(row.oldest_pending_ms),
    };
  }

  async health(thresholds: HealthThresholds = {}): Promise<OutboxHealth> {
    const stats = await this.stats();
    const problems: string[] = [];
    const maxAge = thresholds.maxOldestPendingAgeMs ?? 300_000;
    if (stats.oldestPendingAgeMs !== null && stats.oldestPendingAgeMs > maxAge) {
      problems.push(`oldest pending event is ${stats.oldestPendingAgeMs} ms old (threshold ${maxAge})`);
    }
    if (stats.failed > (thresholds.maxFailed ?? 0)) problems.push(`${stats.failed} FAILED events`);
    if (stats.expiredLeases > (thresholds.maxExpiredLeases ?? 0)) {
      problems.push(`${stats.expiredLeases} expired leases awaiting recovery`);
    }
    return { healthy: problems.length === 0, problems, stats };
  }

  async purgeSent(args: { before: Date; limit?: number }): Promise<{ deleted: number }> {
    if (!(args.before instanceof Date) || Number.isNaN(args.before.getTime())) {
      throw new FerryValidationError('before', 'must be a valid Date');
    }
    const limit = bounded('limit', args.limit, 1_000, 10_000);
    return {
      deleted: await dbCall('purgeSent', () =>
        purgeSentEvents(this.db, { tenantId: this.tenantId, before: args.before, limit }),
      ),
    };
  }
}

/**
 * The operator-scoped admin (every tenant) with forTenant() for a fixed tenant scope.
 * Give application code only the tenant scope.
 */
export function createOutboxAdmin(db: SqlExecutor): OperatorOutboxAdmin {
  const operator = new ScopedOutboxAdmin(db, null);
  return Object.assign(operator, {
    forTenant(tenantId: string): OutboxAdmin {
      if (typeof tenantId !== 'string' || tenantId.length === 0) {
        throw new FerryValidationError('tenantId', 'must be a non-empty string');
      }
      return new ScopedOutboxAdmin(db, tenantId);
    },
  });
}
