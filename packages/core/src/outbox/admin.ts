import { FerryValidationError } from '../errors';
import { assertText } from '../validate/text';
import type { SqlExecutor } from '../sql/executor';
import { adminStatementTimeout, withDeadlines, type StatementTimeoutOptions } from '../sql/statementDeadline';
import { AUDIT_KEYS, type AuditOptions } from '../audit/audited';
import { knownKeysArgument, received, type OptionKeys } from '../optionChecks';
import { bounded, OutboxActions } from './adminActions';
import type {
  AdminResult,
  HealthThresholds,
  ListQuery,
  OperatorOutboxAdmin,
  OutboxAdmin,
  OutboxHealth,
  OutboxStats,
  PurgeSentArgs,
  ReleaseArgs,
  ReleaseResult,
} from './adminTypes';
import type { OutboxRecord } from './record';
import { getEvent, listEvents } from './sql/adminQueries';
import { eventStats } from './sql/stats';
import { dbCall } from './errors';
import { toRecord } from './sql/fragments';

export type * from './adminTypes';

const STATUSES = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'];
const LIST_KEYS = {
  status: true,
  type: true,
  key: true,
  createdBefore: true,
  limit: true,
  cursor: true,
} as const satisfies OptionKeys<ListQuery>;
const HEALTH_KEYS = {
  maxOldestPendingAgeMs: true,
  maxFailed: true,
  maxExpiredLeases: true,
} as const satisfies OptionKeys<HealthThresholds>;
/**
 * markFailed's reason is its own argument; its audit options take the actor and dryRun, and a
 * `reason` too (an AuditOptions shared with retry(): the argument's reason is the one stored).
 */
const MARK_FAILED_KEYS = {
  actor: true,
  dryRun: true,
  reason: true,
} as const satisfies OptionKeys<AuditOptions>;

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

function validDate(field: string, value: Date | undefined): Date | null {
  if (value === undefined) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new FerryValidationError(field, `must be a valid Date, got ${received(value)}`);
  }
  return value;
}

/** One scope: every tenant (`tenantId` null) or a fixed tenant. */
class ScopedOutboxAdmin implements OutboxAdmin {
  private readonly actions: OutboxActions;
  constructor(
    private readonly db: SqlExecutor,
    private readonly tenantId: string | null,
  ) {
    this.actions = new OutboxActions(db, tenantId);
  }

  async retry(id: string, audit?: AuditOptions): Promise<AdminResult> {
    knownKeysArgument('retry', audit, AUDIT_KEYS);
    const [result] = await this.actions.retry([id], audit);
    return result as AdminResult;
  }

  async retryMany(ids: readonly string[], audit?: AuditOptions): Promise<AdminResult[]> {
    knownKeysArgument('retryMany', audit, AUDIT_KEYS);
    bounded('ids.length', ids.length, 1, 1_000);
    return this.actions.retry(ids, audit);
  }

  async markFailed(id: string, reason: string, audit?: Omit<AuditOptions, 'reason'>): Promise<AdminResult> {
    knownKeysArgument('markFailed', audit, MARK_FAILED_KEYS);
    return this.actions.markFailed(id, reason, audit);
  }

  async release(args: ReleaseArgs = {}): Promise<ReleaseResult> {
    return this.actions.release(args);
  }

  async get(id: string): Promise<OutboxRecord | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    const row = await dbCall('get', () => getEvent(this.db, this.tenantId, id));
    return row ? toRecord(row) : null;
  }

  async list(query: ListQuery = {}): Promise<{ items: OutboxRecord[]; nextCursor: string | null }> {
    knownKeysArgument('list', query, LIST_KEYS);
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
        key: query.key ?? null,
        createdBefore: validDate('createdBefore', query.createdBefore),
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
      sentEstimated: row.sent_estimated,
      failed: row.failed,
      expiredLeases: row.expired_leases,
      oldestPendingAgeMs: row.oldest_pending_ms === null ? null : Number(row.oldest_pending_ms),
    };
  }

  async health(thresholds: HealthThresholds = {}): Promise<OutboxHealth> {
    knownKeysArgument('health', thresholds, HEALTH_KEYS);
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

  async purgeSent(args: PurgeSentArgs): Promise<{ deleted: number }> {
    return this.actions.purgeSent(args);
  }
}

/**
 * The operator-scoped admin (every tenant) with forTenant() for a fixed tenant scope.
 * Give application code only the tenant scope. `statementTimeoutMs` (default 30,000) bounds each
 * statement and each audited transaction (withDeadlines), unless `db` is the caller's transaction.
 */
export function createOutboxAdmin(
  client: SqlExecutor,
  options: StatementTimeoutOptions = {},
): OperatorOutboxAdmin {
  const db = withDeadlines(client, adminStatementTimeout(options));
  const operator = new ScopedOutboxAdmin(db, null);
  return Object.assign(operator, {
    forTenant(tenantId: string): OutboxAdmin {
      if (typeof tenantId !== 'string' || tenantId.length === 0) {
        throw new FerryValidationError('tenantId', 'must be a non-empty string');
      }
      assertText('tenantId', tenantId);
      return new ScopedOutboxAdmin(db, tenantId);
    },
  });
}
