import type { SqlExecutor } from '../../sql/executor';
import { claimFence, msInterval } from './fragments';

export type CompletionKind = 'sent' | 'retryable' | 'permanent';

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
}

/**
 * Completes a batch in one fenced statement: sent rows become SENT; a failure increments
 * retry_count and becomes FAILED (permanent, or attempts exhausted against the row's own
 * max_retries) or PENDING due at now() + delay. Rows missing from the result lost the claim.
 */
const COMPLETE = `
  WITH input AS (
    SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bigint[]) AS i(id, kind, error, delay_ms)
  )
  UPDATE outbox_events e SET
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
    claim_token = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = now()
  FROM input i
  WHERE e.id = i.id AND ${claimFence('$1')}
  RETURNING e.id::text AS id, e.status, e.retry_count, e.next_attempt_at`;

export async function completeBatch(
  db: SqlExecutor,
  token: string,
  completions: readonly Completion[],
): Promise<CompletedRow[]> {
  if (completions.length === 0) return [];
  const rows = await db.query<CompletedRow>(COMPLETE, [
    token,
    completions.map((c) => c.id),
    completions.map((c) => c.kind),
    completions.map((c) => c.error),
    completions.map((c) => c.delayMs),
  ]);
  return rows.map((row) => ({ ...row, retry_count: Number(row.retry_count) }));
}
