import type { SqlExecutor } from '../../sql/executor';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';
import type { InboxRecord } from '../types';

export interface NewReceipt {
  readonly tenantId: string | null;
  readonly consumer: string;
  readonly messageId: string;
  readonly messageType: string | null;
  readonly payloadJson: string;
  readonly fingerprint: string;
  readonly payloadBytes: number;
  readonly headersJson: string;
}

/** One statement for the whole batch; rows whose identity exists are skipped, not returned. */
const SQL = `
  INSERT INTO ${TABLE} (tenant_id, consumer, message_id, message_type, payload, payload_fingerprint,
                        payload_bytes, headers, max_attempts)
  SELECT t, c, m, mt, p::jsonb, f, b, h::jsonb, $9::int
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[])
    AS i(t, c, m, mt, p, f, b, h)
  ON CONFLICT (scope, consumer, message_id) DO NOTHING
  RETURNING ${COLUMNS}`;

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
    receipts.map((r) => r.payloadJson),
    receipts.map((r) => r.fingerprint),
    receipts.map((r) => r.payloadBytes),
    receipts.map((r) => r.headersJson),
    maxAttempts,
  ]);
  return rows.map(toRecord);
}
