import { INBOX_TABLE, type SqlExecutor } from '@ferry/core';
import { boundedExecutor } from '@ferry/core/transport';

/**
 * ferry's outbox table, as core's statements name it (core exports the inbox's as INBOX_TABLE).
 * Unqualified, as there: the search_path of --database-url finds both.
 */
const OUTBOX_TABLE = 'outbox_events';

/** A record's JSON fields as PostgreSQL writes them, by field name (`payload`, `headers`). */
export type JsonTexts = Readonly<Record<string, string>>;

/**
 * The payload and headers of the records `ids` (of the outbox or the inbox) as JSON text, for
 * printing them as stored: a JavaScript number holds neither 1e400 (JSON.parse makes it Infinity,
 * printed null) nor 12345678901234567890123 (rounded), and jsonb keeps both exactly (a row
 * inserted by SQL may hold them). The ids are those a scoped read of core's admin API (get, list)
 * answered, so the scope was checked there; a purged payload is `null`, a record gone since has
 * no entry (the caller prints what core read). Bounded by `timeoutMs` (the command's statement
 * deadline) and translated as core's own reads (boundedExecutor): a silent server is
 * FERRY_TIMEOUT, a lost connection FERRY_DATABASE_UNAVAILABLE.
 */
export async function jsonTexts(
  db: SqlExecutor,
  timeoutMs: number,
  kind: 'outbox' | 'inbox',
  ids: readonly string[],
): Promise<ReadonlyMap<string, JsonTexts>> {
  if (ids.length === 0) return new Map();
  const table = kind === 'outbox' ? OUTBOX_TABLE : INBOX_TABLE;
  const bounded = boundedExecutor(db, timeoutMs, `${kind} payload read`);
  const rows = await bounded.query<{ id: string; payload: string | null; headers: string }>(
    `SELECT id::text AS id, payload::text AS payload, headers::text AS headers
     FROM ${table} WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, { payload: row.payload ?? 'null', headers: row.headers }]));
}
