import type { SqlExecutor } from '../../sql/executor';
import type { OutboxStatus } from '../record';
import { opaqueStatus } from './fragments';
import { isUuid } from '../../uuid';

export type AdminOutcome = 'applied' | 'not_found' | 'conflict' | 'lost_claim';

/**
 * The admin transitions, each a compare-and-set from one status, with the outcome
 * computed in SQL: not_found (missing or outside the tenant $2), applied, lost_claim
 * (the statement saw the source status but a concurrent transition won), conflict.
 * PROCESSING rows are never a source, so an active publish is never cancelled.
 *
 * The UPDATE compares the source status opaque (opaqueStatus), so it finds its targets by primary
 * key: with the literal, under statistics that take the status to be rare (analyzed before the
 * rows failed), the planner read every row of that status off its partial index and joined the
 * targets to them, so retrying 100 events beside 2,000 FAILED ones cost 423,401 rows of work
 * under a generic plan (test/outbox/maintenanceCost.test.ts).
 */
function transition(from: OutboxStatus, set: string): string {
  return `
  WITH ids AS (SELECT DISTINCT unnest($1::uuid[]) AS id),
  target AS (
    SELECT e.id, e.status FROM outbox_events e JOIN ids ON ids.id = e.id
    WHERE ($2::text IS NULL OR e.tenant_id = $2::text)
  ), changed AS (
    UPDATE outbox_events e SET ${set}, updated_at = now()
    FROM target t WHERE e.id = t.id AND e.status = ${opaqueStatus(from)}
    RETURNING e.id
  )
  SELECT ids.id::text AS id, CASE
    WHEN t.id IS NULL THEN 'not_found'
    WHEN c.id IS NOT NULL THEN 'applied'
    WHEN t.status = '${from}' THEN 'lost_claim'
    ELSE 'conflict' END AS outcome
  FROM ids LEFT JOIN target t ON t.id = ids.id LEFT JOIN changed c ON c.id = ids.id`;
}

// FAILED -> PENDING: due now, fresh attempts and a fresh poison-guard count (expired_claims);
// the lifetime claim_count is kept.
const RETRY = transition(
  'FAILED',
  `status = 'PENDING', retry_count = 0, expired_claims = 0, next_attempt_at = now(), last_error = NULL,
   failed_at = NULL,
   published_at = NULL, skipped_at = NULL`,
);

// PENDING -> FAILED with the operator's reason ($3).
const MARK_FAILED = transition('PENDING', `status = 'FAILED', failed_at = now(), last_error = $3::text`);

async function run(
  db: SqlExecutor,
  sql: string,
  ids: readonly string[],
  tenantId: string | null,
  extra: unknown[],
): Promise<Map<string, AdminOutcome>> {
  // A malformed id cannot exist: not_found without asking the database.
  const valid = ids.filter((id) => isUuid(id)).map((id) => id.toLowerCase());
  const outcomes = new Map<string, AdminOutcome>();
  if (valid.length > 0) {
    const rows = await db.query<{ id: string; outcome: AdminOutcome }>(sql, [valid, tenantId, ...extra]);
    for (const row of rows) outcomes.set(row.id, row.outcome);
  }
  return outcomes;
}

export async function retryEvents(
  db: SqlExecutor,
  ids: readonly string[],
  tenantId: string | null,
): Promise<Map<string, AdminOutcome>> {
  return run(db, RETRY, ids, tenantId, []);
}

export async function markEventsFailed(
  db: SqlExecutor,
  ids: readonly string[],
  tenantId: string | null,
  reason: string,
): Promise<Map<string, AdminOutcome>> {
  return run(db, MARK_FAILED, ids, tenantId, [reason]);
}
