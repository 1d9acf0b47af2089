import { FerryValidationError } from '../errors';
import { knownKeysArgument, received, type OptionKeys } from '../optionChecks';
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

function scopeFilter(query: AuditQuery): string | null {
  if (query.tenantId !== undefined && query.scope !== undefined) {
    throw new FerryValidationError('scope', 'give tenantId or scope, not both');
  }
  if (query.tenantId !== undefined) return `tenant:${query.tenantId}`;
  return query.scope ?? null;
}

function limitOf(value: number | undefined): number {
  if (value === undefined) return 50;
  if (!Number.isInteger(value) || value < 1 || value > 1_000) {
    throw new FerryValidationError('limit', `must be an integer between 1 and 1000, got ${received(value)}`);
  }
  return value;
}

function cursorOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!/^\d{1,18}$/.test(value)) throw new FerryValidationError('cursor', 'not a cursor returned by list()');
  return value;
}

/**
 * Reads the operator audit trail (ferry_operator_audit). Operator-level: give it to operators only.
 * `statementTimeoutMs` (default 30,000) bounds each read, as on the admins.
 */
export function createAuditLog(executor: SqlExecutor, options: StatementTimeoutOptions = {}): AuditLog {
  const timeoutMs = adminStatementTimeout(options);
  const db = withTranslation(withDeadlines(executor, timeoutMs), 'audit');
  return {
    async list(query: AuditQuery = {}) {
      knownKeysArgument('list', query, QUERY_KEYS);
      if (
        query.since !== undefined &&
        (!(query.since instanceof Date) || Number.isNaN(query.since.getTime()))
      ) {
        throw new FerryValidationError('since', `must be a valid Date, got ${received(query.since)}`);
      }
      const limit = limitOf(query.limit);
      const rows = await listAuditRows(db, {
        after: cursorOf(query.cursor),
        scope: scopeFilter(query),
        action: query.action ?? null,
        actor: query.actor ?? null,
        since: query.since ?? null,
        id: query.id ?? null,
        limit,
      });
      const last = rows[rows.length - 1];
      return { items: rows.map(toEntry), nextCursor: rows.length === limit && last ? last.id : null };
    },
  };
}
