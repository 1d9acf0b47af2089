import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord } from '../types';
import { REPLAY_MESSAGE_ID_PREFIX } from '../messageIds';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';

export interface ReplayRequest {
  readonly scope: string;
  readonly sourceId: string;
  readonly expectedVersion: number;
  readonly requestId: string;
  readonly targetConsumer: string;
  readonly actor: string;
  readonly reason: string;
}

/**
 * A new PENDING receipt copied from a COMPLETED source (observed version, retained payload)
 * with replay lineage; its message id is `ferry:replay:<request id>` (REPLAY_MESSAGE_ID_PREFIX, a
 * namespace no delivery may use). Nothing is inserted when the source does not qualify, the
 * request id already exists in the scope, or (a receipt accepted before the prefix was reserved)
 * the message id is taken.
 */
const SQL = `
  INSERT INTO ${TABLE} (tenant_id, consumer, message_id, message_type, messaging_system, payload,
    payload_fingerprint, payload_bytes, headers, max_attempts, replay_source_id, replay_source_version,
    replay_request_id, replay_actor, replay_reason, replay_requested_at)
  SELECT s.tenant_id, $5::text, $8::text || $4::text, s.message_type, s.messaging_system, s.payload,
    s.payload_fingerprint,
    s.payload_bytes, s.headers, s.max_attempts, s.id, s.row_version, $4::uuid, $6::text, $7::text, now()
  FROM ${TABLE} s
  WHERE s.id = $1::uuid AND s.scope = $2 AND s.status = 'COMPLETED' AND s.row_version = $3::int
    AND s.payload IS NOT NULL
  ON CONFLICT DO NOTHING
  RETURNING ${COLUMNS}`;

export async function insertReplay(db: SqlExecutor, request: ReplayRequest): Promise<InboxRecord | null> {
  const [row] = await db.query<ReceiptRow>(SQL, [
    request.sourceId,
    request.scope,
    request.expectedVersion,
    request.requestId,
    request.targetConsumer,
    request.actor,
    request.reason,
    REPLAY_MESSAGE_ID_PREFIX,
  ]);
  return row ? toRecord(row) : null;
}

const FIND = `SELECT ${COLUMNS} FROM ${TABLE} WHERE scope = $1 AND replay_request_id = $2::uuid`;

export async function findReplay(
  db: SqlExecutor,
  scope: string,
  requestId: string,
): Promise<InboxRecord | null> {
  const [row] = await db.query<ReceiptRow>(FIND, [scope, requestId]);
  return row ? toRecord(row) : null;
}
