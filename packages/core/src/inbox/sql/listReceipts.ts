import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord, InboxStatus } from '../types';
import { COLUMNS, COLUMNS_WITHOUT_PAYLOAD, TABLE, toRecord, type ReceiptRow } from './fragments';

/**
 * Keyset page by id within a scope ($1 null: every scope), optionally one status; without the
 * payloads (`payload` null) when not wanted: a page of large ones is not read for its summary.
 */
const sql = (payload: boolean) => `
  SELECT ${payload ? COLUMNS : COLUMNS_WITHOUT_PAYLOAD} FROM ${TABLE}
  WHERE ($1::text IS NULL OR scope = $1)
    AND ($2::text IS NULL OR status = $2)
    AND ($3::uuid IS NULL OR id > $3::uuid)
  ORDER BY id
  LIMIT $4`;
const SQL = { withPayload: sql(true), withoutPayload: sql(false) } as const;

export async function listReceipts(
  db: SqlExecutor,
  scope: string | null,
  status: InboxStatus | null,
  after: string | null,
  limit: number,
  payload: boolean,
): Promise<InboxRecord[]> {
  const rows = await db.query<ReceiptRow>(payload ? SQL.withPayload : SQL.withoutPayload, [
    scope,
    status,
    after,
    limit,
  ]);
  return rows.map(toRecord);
}
