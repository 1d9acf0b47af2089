import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord } from '../types';
import { opaqueStatus } from '../../outbox/sql/fragments';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';

/**
 * The requeue history entries a receipt keeps: the last 10. Each entry is up to ~4 KB (actor and
 * reason up to 1,000 characters each, the last error up to 2,000): unbounded, an operator script
 * requeueing one poison receipt in a loop grew its row, and every get() and list() carrying it,
 * without end (review 87). Each entry is numbered (`sequence`, from 1); the record says how many
 * older ones were dropped (InboxRecord.requeueHistoryDropped, toRecord).
 */
export const INBOX_REQUEUE_HISTORY_LIMIT = 10;

/**
 * DEAD → PENDING at the observed version: the retry-cycle budget resets, identity, payload,
 * claim token, lifetime attempts and last error stay, and the requeue is appended to history,
 * numbered one past the last entry's `sequence` (an entry stored before entries were numbered
 * counts as one of the history's length), of which the last INBOX_REQUEUE_HISTORY_LIMIT entries
 * are kept: a history that grew longer before the bound is cut down here too. The column is
 * jsonb anyone can set: a history that is not an array counts as empty, and a sequence is counted
 * from only when it is one the record counts from (requeueHistory in fragments.ts): a number that
 * reads in JavaScript as a whole number from 1 to 2^53-1 (4.0 and 1e15 do; 1.5, -5, 1e30 do not:
 * a cast of 1e30 failed every requeue of the receipt, review 88). The number is read as the
 * record reads it, as a double (numeric's float8 rounds as JSON.parse does), within a range that
 * cannot overflow one; any other bound (review 89: 1 to 15 digits) renumbered the history kept.
 * DEAD is opaque (opaqueStatus): the row is found by primary key, not among every DEAD receipt of
 * ferry_inbox_receipts_dead (test/inbox/maintenanceCost.test.ts).
 */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'PENDING', attempts = 0, next_attempt_at = now(), dead_at = NULL,
      requeue_history = (
        SELECT jsonb_agg(entry ORDER BY position)
        FROM (SELECT CASE WHEN jsonb_typeof(requeue_history) = 'array' THEN requeue_history
                          ELSE '[]'::jsonb END AS entries) AS history,
        LATERAL jsonb_array_elements(history.entries || jsonb_build_array(jsonb_build_object(
          'at', now(), 'actor', $4::text, 'reason', $5::text, 'fromVersion', row_version,
          'attemptsInCycle', attempts, 'lastError', last_error,
          'sequence', COALESCE(
            (SELECT seq.value::bigint + (jsonb_array_length(history.entries) - old.position)
               FROM jsonb_array_elements(history.entries) WITH ORDINALITY AS old(entry, position),
               LATERAL (SELECT CASE WHEN jsonb_typeof(old.entry->'sequence') = 'number' THEN
                          CASE WHEN (old.entry->>'sequence')::numeric BETWEEN 0.5 AND 9007199254740992
                               THEN (old.entry->>'sequence')::numeric::float8 END
                        END AS value) AS seq
               WHERE seq.value = trunc(seq.value) AND seq.value BETWEEN 1 AND 9007199254740991
               ORDER BY old.position DESC LIMIT 1),
            jsonb_array_length(history.entries)) + 1)))
          WITH ORDINALITY AS kept(entry, position)
        WHERE position > jsonb_array_length(history.entries) + 1 - ${INBOX_REQUEUE_HISTORY_LIMIT}),
      row_version = row_version + 1, updated_at = now()
  WHERE id = $1::uuid AND scope = $2 AND status = ${opaqueStatus('DEAD')} AND row_version = $3::int
  RETURNING ${COLUMNS}`;

export async function requeueDead(
  db: SqlExecutor,
  scope: string,
  id: string,
  expectedVersion: number,
  actor: string,
  reason: string,
): Promise<InboxRecord | null> {
  const [row] = await db.query<ReceiptRow>(SQL, [id, scope, expectedVersion, actor, reason]);
  return row ? toRecord(row) : null;
}
