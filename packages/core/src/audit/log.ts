import { FerryValidationError } from '../errors';
import { decodeListCursor, encodeListCursor, listingOf, pageBound } from '../listCursor';
import {
  dateArgument,
  integerArgument,
  knownKeysArgument,
  optionalTextFilter,
  type OptionKeys,
} from '../optionChecks';
import { heldExecutor, type ApplicationTransaction } from '../sql/applicationTransaction';
import { dateOf } from '../sql/dateColumn';
import { withTranslation } from '../sql/dbErrors';
import { adminStatementTimeout, withDeadlines, type StatementTimeoutOptions } from '../sql/statementDeadline';
import { listAuditRows, type AuditRow } from './sql';
import { withSerializationRetry } from '../sql/serializationRetry';
import { assertTenantId, tenantIdFault } from '../validate/tenantId';

export interface AuditEntry {
  /** Increasing. */
  readonly id: string;
  readonly at: Date;
  readonly actor: string;
  /** e.g. `outbox.retry`, `outbox.release`, `inbox.requeue`, `inbox.replay`. */
  readonly action: string;
  /** `operator` (outbox, every tenant), `tenant:<id>` or `global`. */
  readonly scope: string;
  readonly reason: string | null;
  readonly ids: readonly string[];
  /** `applied`, `partial`, `none` or `error`. */
  readonly outcome: string;
  /** Per-id outcomes, counts, or `{ code, message }` for an error. */
  readonly results: unknown;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly dryRun: boolean;
}

export interface AuditQuery {
  /** Only this tenant's actions (scope `tenant:<id>`). */
  readonly tenantId?: string;
  /** An exact scope: `operator`, `global` or `tenant:<id>`. */
  readonly scope?: string;
  readonly action?: string;
  readonly actor?: string;
  /**
   * Only actions at or after this time. With a `cursor`, give it again (recomputed from an age is
   * fine): a later instant than the first page's `since`, which the cursor carries, is listed with
   * the first page's, so it does not drop the listing's tail; an earlier one is honoured
   * (listCursor.ts pageBound).
   */
  readonly since?: Date;
  /** Only actions that named this record id. */
  readonly id?: string;
  /** 1..1,000, default 50. */
  readonly limit?: number;
  readonly cursor?: string;
}

export interface AuditLog {
  /** Newest first. */
  list(query?: AuditQuery): Promise<{ items: AuditEntry[]; nextCursor: string | null }>;
}

const QUERY_KEYS = {
  tenantId: true,
  scope: true,
  action: true,
  actor: true,
  since: true,
  id: true,
  limit: true,
  cursor: true,
} as const satisfies OptionKeys<AuditQuery>;

function toEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: dateOf(row.at),
    actor: row.actor,
    action: row.action,
    scope: row.scope,
    reason: row.reason,
    ids: row.ids,
    outcome: row.outcome,
    results: row.results,
    arguments: row.arguments,
    dryRun: row.dry_run,
  };
}

/** An optional text filter: a number is refused, never turned into text. */

const TENANT_SCOPE = 'tenant:';

/**
 * The exact scope listed: `tenantId`'s, or `scope`. A tenant id, given either way, follows the
 * rule of every tenant id (assertTenantId, the admins' forTenant): no scope of such an id was
 * ever written, so an empty trail would only hide the mistake.
 */
function scopeFilter(query: AuditQuery): string | null {
  const tenantId = query.tenantId === undefined ? null : assertTenantId(query.tenantId);
  const scope = optionalTextFilter('scope', query.scope);
  if (scope?.startsWith(TENANT_SCOPE) === true) {
    const fault = tenantIdFault(scope.slice(TENANT_SCOPE.length));
    if (fault !== null) {
      throw new FerryValidationError(
        'scope',
        `the tenant id of tenant:<id> ${fault.reason}`,
        'FERRY_VALIDATION_FAILED',
        fault.rule,
      );
    }
  }
  if (tenantId !== null && scope !== null) {
    throw new FerryValidationError('scope', 'give tenantId or scope, not both');
  }
  return tenantId === null ? scope : `${TENANT_SCOPE}${tenantId}`;
}

/**
 * The id a page ends at, bound to the filters it was listed with, and the listing's `since`
 * (listCursor.ts: the first page's, used by every later one).
 */
function cursorOf(
  value: unknown,
  listing: string,
  bounded: boolean,
): { id: string; since: Date | null } | null {
  const cursor = optionalTextFilter('cursor', value);
  if (cursor === null) return null;
  const { position, bound } = decodeListCursor(cursor, listing, ['bigint'], bounded);
  return { id: position[0] as string, since: bound };
}

/**
 * Reads the operator audit trail (ferry_operator_audit). Operator-level: give it to operators only.
 * Takes what the admins take (an executor, the application's client or one of its transactions);
 * `statementTimeoutMs` (default 30,000) bounds each read, as on the admins.
 */
export function createAuditLog(
  executor: ApplicationTransaction,
  options: StatementTimeoutOptions = {},
): AuditLog {
  const timeoutMs = adminStatementTimeout(options);
  // On a pg client, made again at each call from the client's status (heldExecutor).
  const db = heldExecutor(executor, 'executor', (inner) =>
    withTranslation(withSerializationRetry(withDeadlines(inner, timeoutMs), timeoutMs), 'audit'),
  );
  return {
    async list(query: AuditQuery = {}) {
      knownKeysArgument('list', query, QUERY_KEYS);
      const scope = scopeFilter(query);
      const action = optionalTextFilter('action', query.action);
      const actor = optionalTextFilter('actor', query.actor);
      const given = query.since === undefined ? null : dateArgument('since', query.since);
      const id = optionalTextFilter('id', query.id);
      const listing = listingOf('audit', scope, action, actor, id);
      const cursor = cursorOf(query.cursor, listing, given !== null);
      // A later page keeps the first page's bound, unless the caller's is earlier (pageBound).
      const since = cursor === null ? given : pageBound(given, cursor.since);
      const after = cursor?.id ?? null;
      const limit = integerArgument('limit', query.limit, 1, 1_000, 50);
      // One row more than the page: a cursor only when a next page has rows.
      const rows = await listAuditRows(db, { after, scope, action, actor, since, id, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map(toEntry),
        nextCursor: rows.length > limit && last ? encodeListCursor([last.id], listing, since) : null,
      };
    },
  };
}
