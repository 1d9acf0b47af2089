import type { SqlExecutor } from '../../sql/executor';
import type { InboxRecord } from '../types';
import { COLUMNS, TABLE, toRecord, type ReceiptRow } from './fragments';

export interface Identity {
  readonly scope: string;
  readonly consumer: string;
  readonly messageId: string;
}

const SQL = `
  SELECT ${COLUMNS} FROM ${TABLE}
  WHERE (scope, consumer, message_id) IN (
    SELECT s, c, m FROM unnest($1::text[], $2::text[], $3::text[]) AS i(s, c, m))`;

/** Existing receipts for the given identities (any order, missing ones absent). */
export async function findByIdentity(
  db: SqlExecutor,
  identities: readonly Identity[],
): Promise<InboxRecord[]> {
  if (identities.length === 0) return [];
  const rows = await db.query<ReceiptRow>(SQL, [
    identities.map((i) => i.scope),
    identities.map((i) => i.consumer),
    identities.map((i) => i.messageId),
  ]);
  return rows.map(toRecord);
}
