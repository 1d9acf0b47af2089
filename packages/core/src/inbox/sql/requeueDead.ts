import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord } from '../types';
import { opaqueStatus } from '../../outbox/sql/fragments';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';

/**
 * DEAD → PENDING at the observed version: the retry-cycle budget resets, identity, payload,
 * claim token, lifetime attempts and last error stay, and the requeue is appended to history.
 * DEAD is opaque (opaqueStatus): the row is found by primary key, not among every DEAD receipt of
 * ferry_inbox_receipts_dead (test/inbox/maintenanceCost.test.ts).
 */
const SQL = `
  UPDATE ${TABLE}
  SET status = 'PENDING', attempts = 0, next_attempt_at = now(), dead_at = NULL,
      requeue_history = requeue_history || jsonb_build_array(jsonb_build_object(
        'at', now(), 'actor', $4::text, 'reason', $5::text, 'fromVersion', row_version,
        'attemptsInCycle', attempts, 'lastError', last_error)),
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
