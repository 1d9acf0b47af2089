import { decodeListCursor, encodeListCursor, listingOf, pageBound } from '../listCursor';
import { isUuid } from '../uuid';
import { assertTenantId } from '../validate/tenantId';
import { heldExecutor, type ApplicationTransaction } from '../sql/applicationTransaction';
import type { SqlExecutor } from '../sql/executor';
import { adminStatementTimeout, withDeadlines, type StatementTimeoutOptions } from '../sql/statementDeadline';
import { AUDIT_KEYS, type AuditOptions } from '../audit/audited';
import {
  dateArgument,
  integerArgument,
  knownKeysArgument,
  oneOfArgument,
  optionalTextFilter,
  stringArgument,
  uuidArgument,
  uuidListArgument,
  booleanArgument,
  type OptionKeys,
} from '../optionChecks';
import { OutboxActions } from './adminActions';
import type {
  AdminResult,
  HealthThresholds,
  ListQuery,
  ListSummaryQuery,
  OperatorOutboxAdmin,
  OutboxAdmin,
  OutboxHealth,
  OutboxPage,
  OutboxStats,
  OutboxSummary,
  PurgeSentArgs,
  ReleaseArgs,
  ReleaseResult,
} from './adminTypes';
import type { OutboxRecord } from './record';
import { getEvent, listEvents } from './sql/adminQueries';
import { eventStats } from './sql/stats';
import { dbCall } from './errors';
import { toRecord } from './sql/fragments';
import { withReadCommittedTransactions, withSerializationRetry } from '../sql/serializationRetry';

export type * from './adminTypes';

const STATUSES = ['PENDING', 'PROCESSING', 'SENT', 'FAILED'] as const;
const LIST_KEYS = {
  status: true,
  type: true,
  key: true,
  createdBefore: true,
  limit: true,
  cursor: true,
  payload: true,
} as const satisfies OptionKeys<ListQuery>;
const HEALTH_KEYS = {
  maxOldestPendingAgeMs: true,
  maxFailed: true,
  maxExpiredLeases: true,
} as const satisfies OptionKeys<HealthThresholds>;
/**
 * markFailed's reason is its own argument; its audit options take the actor and dryRun only: a
 * `reason` there is refused (FERRY_VALIDATION_FAILED on `reason`), never dropped while the
 * argument's reason is the one stored (review 70: a ticket number given there was nowhere in the
 * trail).
 */
const MARK_FAILED_KEYS = {
  actor: true,
  dryRun: true,
} as const satisfies OptionKeys<Omit<AuditOptions, 'reason'>>;

/**
 * The created_at (microseconds) and seq a page ends at, bound to its scope and filters, with the
 * listing's createdBefore (listCursor.ts: the first page's, used by every later one).
 */
function encodeCursor(us: string, seq: string, createdBefore: Date | null, listing: string): string {
  return encodeListCursor([us, seq], listing, createdBefore);
}

function decodeCursor(
  value: unknown,
  listing: string,
  bounded: boolean,
): { us: string; seq: string; createdBefore: Date | null } {
  const cursor = stringArgument('cursor', value);
  const { position, bound } = decodeListCursor(cursor, listing, ['micros', 'bigint'], bounded);
  return { us: position[0] as string, seq: position[1] as string, createdBefore: bound };
}

/** An optional string filter (`type`, `key`): a number is refused, never turned into text. */

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
    uuidArgument('id', id);
    knownKeysArgument('retry', audit, AUDIT_KEYS);
    const [result] = await this.actions.retry([id], audit);
    return result as AdminResult;
  }

  async retryMany(ids: readonly string[], audit?: AuditOptions): Promise<AdminResult[]> {
    const checked = uuidListArgument('ids', ids, 1_000);
    knownKeysArgument('retryMany', audit, AUDIT_KEYS);
    return this.actions.retry(checked, audit);
  }

  async markFailed(id: string, reason: string, audit?: Omit<AuditOptions, 'reason'>): Promise<AdminResult> {
    knownKeysArgument('markFailed', audit, MARK_FAILED_KEYS);
    return this.actions.markFailed(id, reason, audit);
  }

  async release(args: ReleaseArgs = {}): Promise<ReleaseResult> {
    return this.actions.release(args);
  }

  /** A string that is no UUID names no event: null. Anything but a string is refused. */
  async get(id: string): Promise<OutboxRecord | null> {
    if (!isUuid(stringArgument('id', id))) {
      return null;
    }
    const row = await dbCall('get', () => getEvent(this.db, this.tenantId, id));
    return row ? toRecord(row) : null;
  }

  list(query?: ListQuery): Promise<OutboxPage<OutboxRecord>>;
  list(query: ListSummaryQuery): Promise<OutboxPage<OutboxSummary>>;
  async list(
    query: ListQuery | ListSummaryQuery = {},
  ): Promise<OutboxPage<OutboxRecord> | OutboxPage<OutboxSummary>> {
    knownKeysArgument('list', query, LIST_KEYS);
    const payload = booleanArgument('payload', query.payload) ?? true;
    const tenantId = this.tenantId;
    const status = oneOfArgument('status', query.status, STATUSES) ?? null;
    const type = optionalTextFilter('type', query.type);
    const key = optionalTextFilter('key', query.key);
    const given =
      query.createdBefore === undefined ? null : dateArgument('createdBefore', query.createdBefore);
    const listing = listingOf('outbox', tenantId, status, type, key);
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor, listing, given !== null);
    // A later page keeps the first page's bound, unless the caller's is earlier (pageBound).
    const createdBefore = after === null ? given : pageBound(given, after.createdBefore);
    const limit = integerArgument('limit', query.limit, 1, 1_000, 50);
    // One row more than the page: a cursor only when a next page has rows.
    const filter = { tenantId, status, type, key, createdBefore, after, limit: limit + 1, payload };
    const rows = await dbCall('list', () => listEvents(this.db, filter));
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map(toRecord),
      nextCursor:
        rows.length > limit && last ? encodeCursor(last.created_us, last.seq, createdBefore, listing) : null,
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
    const threshold = (name: keyof HealthThresholds, fallback: number) =>
      integerArgument(name, thresholds[name], 0, Number.MAX_SAFE_INTEGER, fallback);
    const maxAge = threshold('maxOldestPendingAgeMs', 300_000);
    const maxFailed = threshold('maxFailed', 0);
    const maxExpiredLeases = threshold('maxExpiredLeases', 0);
    const stats = await this.stats();
    const problems: string[] = [];
    if (stats.oldestPendingAgeMs !== null && stats.oldestPendingAgeMs > maxAge) {
      problems.push(`oldest pending event is ${stats.oldestPendingAgeMs} ms old (threshold ${maxAge})`);
    }
    if (stats.failed > maxFailed) problems.push(`${stats.failed} FAILED events`);
    if (stats.expiredLeases > maxExpiredLeases) {
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
  client: ApplicationTransaction,
  options: StatementTimeoutOptions = {},
): OperatorOutboxAdmin {
  // Anything but a database client is refused here, not with a TypeError at the first call.
  const timeoutMs = adminStatementTimeout(options);
  // On a pg client, made again at each call from the client's status (heldExecutor).
  const db = heldExecutor(client, 'client', (executor) =>
    withSerializationRetry(withReadCommittedTransactions(withDeadlines(executor, timeoutMs)), timeoutMs),
  );
  const operator = new ScopedOutboxAdmin(db, null);
  return Object.assign(operator, {
    forTenant(tenantId: string): OutboxAdmin {
      // The rule of every tenant id emit() stores (whatever its maxIdLength): a longer one, a line
      // break or an escape names no event (and would reach an operator's terminal through the
      // audit rows of the scope).
      return new ScopedOutboxAdmin(db, assertTenantId(tenantId));
    },
  });
}
