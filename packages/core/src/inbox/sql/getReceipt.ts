import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord } from '../types';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';

/** $2 null selects any scope (privileged admin only). */
const SQL = `SELECT ${COLUMNS} FROM ${TABLE} WHERE id = $1::uuid AND ($2::text IS NULL OR scope = $2)`;

export async function getReceipt(
  db: SqlExecutor,
  scope: string | null,
  id: string,
): Promise<InboxRecord | null> {
  const [row] = await db.query<ReceiptRow>(SQL, [id, scope]);
  return row ? toRecord(row) : null;
}
