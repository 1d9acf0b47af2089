import { FerryValidationError } from '../errors';
import {
  dateArgument,
  integerArgument,
  knownKeysArgument,
  stringArgument,
  type OptionKeys,
} from '../optionChecks';
import { executorFor } from '../sql/applicationTransaction';
import type { SqlExecutor } from '../sql/executor';
import { withTranslation } from '../sql/dbErrors';
import { adminStatementTimeout, withDeadlines, type StatementTimeoutOptions } from '../sql/statementDeadline';
import { listAuditRows, type AuditRow } from './sql';

export interface AuditEntry {
  /** Increasing; also the list cursor. */
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
    at: new Date(row.at),
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
function optionalString(field: keyof AuditQuery, value: unknown): string | null {
  return value === undefined ? null : stringArgument(field, value);
}

function scopeFilter(query: AuditQuery): string | null {
  const tenantId = optionalString('tenantId', query.tenantId);
  const scope = optionalString('scope', query.scope);
  if (tenantId !== null && scope !== null) {
    throw new FerryValidationError('scope', 'give tenantId or scope, not both');
  }
  return tenantId === null ? scope : `tenant:${tenantId}`;
}

function cursorOf(value: unknown): string | null {
  const cursor = optionalString('cursor', value);
  if (cursor !== null && !/^\d{1,18}$/.test(cursor)) {
    throw new FerryValidationError('cursor', 'not a cursor returned by list()');
  }
  return cursor;
}

/**
 * Reads the operator audit trail (ferry_operator_audit). Operator-level: give it to operators only.
 * `statementTimeoutMs` (default 30,000) bounds each read, as on the admins.
 */
export function createAuditLog(executor: SqlExecutor, options: StatementTimeoutOptions = {}): AuditLog {
  const timeoutMs = adminStatementTimeout(options);
  const db = withTranslation(withDeadlines(executorFor(executor, 'executor'), timeoutMs), 'audit');
  return {
    async list(query: AuditQuery = {}) {
      knownKeysArgument('list', query, QUERY_KEYS);
      const filter = {
        after: cursorOf(query.cursor),
        scope: scopeFilter(query),
        action: optionalString('action', query.action),
        actor: optionalString('actor', query.actor),
        since: query.since === undefined ? null : dateArgument('since', query.since),
        id: optionalString('id', query.id),
        limit: integerArgument('limit', query.limit, 1, 1_000, 50),
      };
      const limit = filter.limit;
      const rows = await listAuditRows(db, filter);
      const last = rows[rows.length - 1];
      return { items: rows.map(toEntry), nextCursor: rows.length === limit && last ? last.id : null };
    },
  };
}
