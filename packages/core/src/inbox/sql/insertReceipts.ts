import type { SqlExecutor } from '../../sql/executor';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';
import type { InboxRecord } from '../types';
import { INBOX_CHANNEL } from '../wakeup';

export interface NewReceipt {
  readonly tenantId: string | null;
  readonly consumer: string;
  readonly messageId: string;
  readonly messageType: string | null;
  readonly system: string | null;
  readonly payloadJson: string;
  readonly fingerprint: string;
  readonly payloadBytes: number;
  readonly headersJson: string;
}

/**
 * One statement for the whole batch; rows whose identity exists are skipped, not returned.
 * Rows are inserted in identity order (scope, consumer, message id; byte order), so two
 * concurrent batches that share identities take the unique-index locks in the same order
 * and cannot deadlock (40P01), whatever order their callers gave. When any row is new, the
 * same statement notifies INBOX_CHANNEL (delivered at commit) to wake LISTENing workers.
 */
const SQL = `
  WITH inserted AS (
  INSERT INTO ${TABLE} (tenant_id, consumer, message_id, message_type, messaging_system, payload,
                        payload_fingerprint, payload_bytes, headers, max_attempts)
  SELECT t, c, m, mt, ms, p::jsonb, f, b, h::jsonb, $10::int
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
              $8::int[], $9::text[])
    AS i(t, c, m, mt, ms, p, f, b, h)
  ORDER BY coalesce('tenant:' || t, 'global') COLLATE "C", c COLLATE "C", m COLLATE "C"
  ON CONFLICT (scope, consumer, message_id) DO NOTHING
  RETURNING ${COLUMNS}
  )
  SELECT inserted.* FROM inserted,
    (SELECT pg_notify('${INBOX_CHANNEL}', '') WHERE EXISTS (SELECT 1 FROM inserted)) AS woken`;

export async function insertReceipts(
  db: SqlExecutor,
  receipts: readonly NewReceipt[],
  maxAttempts: number,
): Promise<InboxRecord[]> {
  if (receipts.length === 0) return [];
  const rows = await db.query<ReceiptRow>(SQL, [
    receipts.map((r) => r.tenantId),
    receipts.map((r) => r.consumer),
    receipts.map((r) => r.messageId),
    receipts.map((r) => r.messageType),
    receipts.map((r) => r.system),
    receipts.map((r) => r.payloadJson),
    receipts.map((r) => r.fingerprint),
    receipts.map((r) => r.payloadBytes),
    receipts.map((r) => r.headersJson),
    maxAttempts,
  ]);
  return rows.map(toRecord);
}
