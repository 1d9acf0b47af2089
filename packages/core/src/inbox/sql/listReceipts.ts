import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord, InboxStatus } from '../types';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';

/** Keyset page by id within a scope ($1 null: every scope), optionally one status. */
const SQL = `
  SELECT ${COLUMNS} FROM ${TABLE}
  WHERE ($1::text IS NULL OR scope = $1)
    AND ($2::text IS NULL OR status = $2)
    AND ($3::uuid IS NULL OR id > $3::uuid)
  ORDER BY id
  LIMIT $4`;

export async function listReceipts(
  db: SqlExecutor,
  scope: string | null,
  status: InboxStatus | null,
  after: string | null,
  limit: number,
): Promise<InboxRecord[]> {
  const rows = await db.query<ReceiptRow>(SQL, [scope, status, after, limit]);
  return rows.map(toRecord);
}
