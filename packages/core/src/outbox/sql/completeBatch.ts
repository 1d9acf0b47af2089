import type { SqlExecutor } from '../../sql/executor';
import type { OnSent } from '../options';
import { claimFence, msInterval } from './fragments';

/** `unavailable` rows are released by the relay (store.release), never passed to completeBatch. */
export type CompletionKind = 'sent' | 'retryable' | 'permanent' | 'unavailable';

export interface Completion {
  readonly id: string;
  readonly kind: CompletionKind;
  readonly error: string | null;
  /** Back-off to apply if this failure leaves attempts (computed by the pure backoff). */
  readonly delayMs: number;
}

export interface CompletedRow {
  id: string;
  status: 'SENT' | 'PENDING' | 'FAILED';
  retry_count: number;
  next_attempt_at: Date | string;
  /** From created_at to this completion, on the database clock. */
  age_ms: number;
}

const INPUT = `
  input AS (
    SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bigint[]) AS i(id, kind, error, delay_ms)
  )`;

const SET = `
    status = CASE
      WHEN i.kind = 'sent' THEN 'SENT'
      WHEN i.kind = 'permanent' OR e.retry_count + 1 >= e.max_retries THEN 'FAILED'
      ELSE 'PENDING' END,
    retry_count = CASE WHEN i.kind = 'sent' THEN e.retry_count ELSE e.retry_count + 1 END,
    next_attempt_at = CASE WHEN i.kind = 'retryable' AND e.retry_count + 1 < e.max_retries
      THEN now() + ${msInterval('i.delay_ms')} ELSE e.next_attempt_at END,
    last_error = CASE WHEN i.kind = 'sent' THEN e.last_error ELSE i.error END,
    published_at = CASE WHEN i.kind = 'sent' THEN now() END,
    failed_at = CASE WHEN i.kind <> 'sent' AND (i.kind = 'permanent' OR e.retry_count + 1 >= e.max_retries)
      THEN now() END,
    expired_claims = 0,
    claim_token = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = now()`;

const AGE_MS = `(extract(epoch FROM now() - e.created_at) * 1000)::float8 AS age_ms`;

const RETURNED = `e.id::text AS id, e.status, e.retry_count, e.next_attempt_at, ${AGE_MS}`;

/**
 * Completes a batch in one fenced statement: sent rows become SENT; a failure increments
 * retry_count and becomes FAILED (permanent, or attempts exhausted against the row's own
 * max_retries) or PENDING due at now() + delay. Any fenced completion resets the poison
 * guard's expired_claims. Rows missing from the result lost the claim.
 */
const COMPLETE = `
  WITH ${INPUT}
  UPDATE outbox_events e SET ${SET}
  FROM input i
  WHERE e.id = i.id AND ${claimFence('$1')}
  RETURNING ${RETURNED}`;

/**
 * onSent 'delete': the same, except that sent rows are deleted (under the same fence) instead
 * of kept as SENT, so a sent event costs no second row version and no SENT index entries.
 */
const COMPLETE_DELETING_SENT = `
  WITH ${INPUT}, gone AS (
    DELETE FROM outbox_events e USING input i
    WHERE e.id = i.id AND i.kind = 'sent' AND ${claimFence('$1')}
    RETURNING e.id::text AS id, 'SENT'::text AS status, e.retry_count, e.next_attempt_at, ${AGE_MS}
  ), kept AS (
    UPDATE outbox_events e SET ${SET}
    FROM input i
    WHERE e.id = i.id AND i.kind <> 'sent' AND ${claimFence('$1')}
    RETURNING ${RETURNED}
  )
  SELECT * FROM gone UNION ALL SELECT * FROM kept`;

export async function completeBatch(
  db: SqlExecutor,
  token: string,
  completions: readonly Completion[],
  onSent: OnSent = 'keep',
): Promise<CompletedRow[]> {
  if (completions.length === 0) return [];
  const rows = await db.query<CompletedRow>(onSent === 'delete' ? COMPLETE_DELETING_SENT : COMPLETE, [
    token,
    completions.map((c) => c.id),
    completions.map((c) => c.kind),
    completions.map((c) => c.error),
    completions.map((c) => c.delayMs),
  ]);
  return rows.map((row) => ({ ...row, retry_count: Number(row.retry_count), age_ms: Number(row.age_ms) }));
}
