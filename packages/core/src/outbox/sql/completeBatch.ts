import type { SqlExecutor } from '../../sql/executor';
import type { OnSent } from '../options';
import { claimFence, msInterval, msSince, nextRetryCount } from './fragments';
import { dateMs, type DateMs } from '../../sql/dateColumn';

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
  /** Read with dateMs (sql/dateColumn.ts). */
  next_attempt_at: DateMs;
  /** From created_at to this completion, on the database clock. */
  age_ms: number;
}

/** The failures ($3..$6); sent rows come as ids alone ($2). */
const FAILURES = `
  failures AS (
    SELECT * FROM unnest($3::uuid[], $4::text[], $5::text[], $6::bigint[]) AS i(id, kind, error, delay_ms)
  )`;

/** What every fenced completion clears: the claim, and the poison guard's expired_claims. */
const RELEASED = `expired_claims = 0, claim_token = NULL, lease_expires_at = NULL, claimed_at = NULL, updated_at = now()`;

const SET_SENT = `status = 'SENT', published_at = now(), failed_at = NULL, ${RELEASED}`;

/** This failure spends the row's last attempt (or more: a row whose attempts SQL left spent). */
const EXHAUSTED = `${nextRetryCount('e')} >= e.max_retries`;

/**
 * Every value is computed per row and kept within the table's CHECKs whatever the row holds
 * (nextRetryCount): a value one row cannot take would fail the statement, and with it the
 * completion of every row of the batch, at every cycle.
 */
const SET_FAILED = `
    status = CASE WHEN i.kind = 'permanent' OR ${EXHAUSTED} THEN 'FAILED' ELSE 'PENDING' END,
    retry_count = ${nextRetryCount('e')},
    next_attempt_at = CASE WHEN i.kind = 'retryable' AND NOT ${EXHAUSTED}
      THEN now() + ${msInterval('i.delay_ms')} ELSE e.next_attempt_at END,
    last_error = i.error,
    published_at = NULL,
    failed_at = CASE WHEN i.kind = 'permanent' OR ${EXHAUSTED} THEN now() END,
    ${RELEASED}`;

/** A finite age for any created_at, ±infinity included (msSince): never a failed statement. */
const AGE_MS = `${msSince('e.created_at')}::float8 AS age_ms`;

const NEXT_ATTEMPT_AT = `${dateMs('e.next_attempt_at')} AS next_attempt_at`;

const RETURNED = `e.id::text AS id, e.status, e.retry_count, ${NEXT_ATTEMPT_AT}, ${AGE_MS}`;

/** The sent rows, by primary key: `= ANY` over the ids, no join (see the note on COMPLETE). */
const SENT_ROWS = `e.id = ANY ($2::uuid[]) AND ${claimFence('$1', { byId: true })}`;

const FAILED = `
  failed AS (
    UPDATE outbox_events e SET ${SET_FAILED}
    FROM failures i
    WHERE e.id = i.id AND ${claimFence('$1', { byId: true })}
    RETURNING ${RETURNED}
  )`;

/**
 * Completes a batch in one fenced statement: sent rows become SENT; a failure increments
 * retry_count and becomes FAILED (permanent, or attempts exhausted against the row's own
 * max_retries) or PENDING due at now() + delay. Any fenced completion resets the poison
 * guard's expired_claims. Rows missing from the result lost the claim.
 *
 * Sent rows are matched by `id = ANY`, never joined to an input: with the input as a join, and
 * statistics that took the claim's rows for one (the claim token all NULL when analyzed, or an
 * empty table), the planner nested the input inside the table's rows and rescanned all of it for
 * each: 500 completions cost 250,000 rows of work (test/outbox/claimCost.test.ts). Failures, each
 * with its own kind, error and delay, still join; they are the exception in a batch.
 */
const COMPLETE = `
  WITH ${FAILURES}, ${FAILED}, sent AS (
    UPDATE outbox_events e SET ${SET_SENT}
    WHERE ${SENT_ROWS}
    RETURNING ${RETURNED}
  )
  SELECT * FROM sent UNION ALL SELECT * FROM failed`;

/**
 * onSent 'delete': the same, except that sent rows are deleted (under the same fence) instead
 * of kept as SENT, so a sent event costs no second row version and no SENT index entries.
 */
const COMPLETE_DELETING_SENT = `
  WITH ${FAILURES}, ${FAILED}, gone AS (
    DELETE FROM outbox_events e
    WHERE ${SENT_ROWS}
    RETURNING e.id::text AS id, 'SENT'::text AS status, e.retry_count, ${NEXT_ATTEMPT_AT}, ${AGE_MS}
  )
  SELECT * FROM gone UNION ALL SELECT * FROM failed`;

export async function completeBatch(
  db: SqlExecutor,
  token: string,
  completions: readonly Completion[],
  onSent: OnSent = 'keep',
): Promise<CompletedRow[]> {
  if (completions.length === 0) return [];
  const sent = completions.filter((c) => c.kind === 'sent');
  const failures = completions.filter((c) => c.kind !== 'sent');
  const rows = await db.query<CompletedRow>(onSent === 'delete' ? COMPLETE_DELETING_SENT : COMPLETE, [
    token,
    sent.map((c) => c.id),
    failures.map((c) => c.id),
    failures.map((c) => c.kind),
    failures.map((c) => c.error),
    failures.map((c) => c.delayMs),
  ]);
  return rows.map((row) => ({ ...row, retry_count: Number(row.retry_count), age_ms: Number(row.age_ms) }));
}
