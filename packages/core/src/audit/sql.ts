import { isUuid } from '../uuid';
import type { SqlExecutor } from '../sql/executor';
import { dateMs, type DateMs } from '../sql/dateColumn';

/** ferry's operator audit table (migration 0006_operator_audit). */
export const AUDIT_TABLE = 'ferry_operator_audit';

export interface AuditRow {
  id: string;
  /** Read with dateMs (sql/dateColumn.ts). */
  at: DateMs;
  actor: string;
  action: string;
  scope: string;
  reason: string | null;
  ids: string[];
  outcome: string;
  results: unknown;
  arguments: Record<string, unknown>;
  dry_run: boolean;
}

const INSERT = `
  INSERT INTO ${AUDIT_TABLE} (actor, action, scope, reason, ids, outcome, results, arguments, dry_run)
  VALUES ($1, $2, $3, $4, $5::text[], $6, $7::jsonb, $8::jsonb, $9)
  RETURNING id::text AS id`;

export interface AuditInsert {
  readonly actor: string;
  readonly action: string;
  readonly scope: string;
  readonly reason: string | null;
  readonly ids: readonly string[];
  readonly outcome: string;
  readonly results: unknown;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly dryRun: boolean;
}

export async function insertAudit(db: SqlExecutor, entry: AuditInsert): Promise<string> {
  const [row] = await db.query<{ id: string }>(INSERT, [
    entry.actor,
    entry.action,
    entry.scope,
    entry.reason,
    entry.ids.map(canonicalId),
    entry.outcome,
    JSON.stringify(entry.results),
    JSON.stringify(entry.arguments),
    entry.dryRun,
  ]);
  return (row as { id: string }).id;
}

// Newest first; $1 the exclusive id cursor; NULL filters match everything.
const LIST = `
  SELECT a.id::text AS id, ${dateMs('a.at')} AS at, a.actor, a.action, a.scope, a.reason, a.ids, a.outcome, a.results,
    a.arguments, a.dry_run
  FROM ${AUDIT_TABLE} a
  WHERE ($1::bigint IS NULL OR a.id < $1::bigint)
    AND ($2::text IS NULL OR a.scope = $2::text)
    AND ($3::text IS NULL OR a.action = $3::text)
    AND ($4::text IS NULL OR a.actor = $4::text)
    AND ($5::timestamptz IS NULL OR a.at >= $5::timestamptz)
    AND ($6::text IS NULL OR $6::text = ANY(a.ids) OR lower($6::text) = ANY(a.ids))
  -- a.id, the bigint: the output column id is its text form and would sort '9' after '10'.
  ORDER BY a.id DESC
  LIMIT $7`;

export interface AuditFilter {
  readonly after: string | null;
  readonly scope: string | null;
  readonly action: string | null;
  readonly actor: string | null;
  readonly since: Date | null;
  readonly id: string | null;
  readonly limit: number;
}

export function listAuditRows(db: SqlExecutor, filter: AuditFilter): Promise<AuditRow[]> {
  return db.query<AuditRow>(LIST, [
    filter.after,
    filter.scope,
    filter.action,
    filter.actor,
    filter.since?.toISOString() ?? null,
    filter.id,
    filter.limit,
  ]);
}

/**
 * A record id as the audit trail stores it: a UUID in lower case, as PostgreSQL prints it (the
 * admins take it in any case), so the trail's `id` filter finds an action whatever case its
 * caller wrote (review 35). The filter also matches rows written before, in the caller's case.
 */
function canonicalId(id: string): string {
  return isUuid(id) ? id.toLowerCase() : id;
}
