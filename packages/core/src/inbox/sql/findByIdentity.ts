import type { SqlExecutor } from '../../sql/executor';
import type { ReceiptKey } from '../types';
import { TABLE, type ReceiptRow, type ReceiptShape } from './fragments';

export interface Identity {
  readonly scope: string;
  readonly consumer: string;
  readonly messageId: string;
}

const sql = (columns: string) => `
  SELECT ${columns} FROM ${TABLE}
  WHERE (scope, consumer, message_id) IN (
    SELECT s, c, m FROM unnest($1::text[], $2::text[], $3::text[]) AS i(s, c, m))`;

/** Existing receipts for the given identities (any order, missing ones absent), read as `shape`. */
export async function findByIdentity<R extends ReceiptKey>(
  db: SqlExecutor,
  identities: readonly Identity[],
  shape: ReceiptShape<R>,
): Promise<R[]> {
  if (identities.length === 0) return [];
  const rows = await db.query<ReceiptRow>(sql(shape.columns), [
    identities.map((i) => i.scope),
    identities.map((i) => i.consumer),
    identities.map((i) => i.messageId),
  ]);
  return rows.map(shape.read);
}
