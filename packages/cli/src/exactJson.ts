import { INBOX_TABLE, type SqlExecutor } from '@ferry/core';
import { boundedExecutor, withTranslation } from '@ferry/core/transport';

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
 * answered, so the scope was checked there; a purged payload is `null`. Read in that read's
 * snapshot (withJsonTexts), so both are one moment's. Bounded by `timeoutMs` (the command's
 * statement deadline) and translated as core's own reads (boundedExecutor): a silent server is
 * FERRY_TIMEOUT, a lost connection FERRY_DATABASE_UNAVAILABLE.
 */
async function jsonTexts(
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

/**
 * `read` (a scoped read of core's admin API) and the JSON texts (jsonTexts) of the records
 * `idsOf` finds in its answer, both in one REPEATABLE READ, READ ONLY transaction: one snapshot.
 * Read in two snapshots, a change committed between them made one answer of two moments (review
 * 102: a receipt purged in between printed `payload: null` beside `payloadPurgedAt: null` and the
 * version before the purge; an event deleted in between lost its exact payload). No ids (a text
 * listing reads no payload): `read` alone, no transaction.
 */
export async function withJsonTexts<T>(
  db: SqlExecutor,
  timeoutMs: number,
  kind: 'outbox' | 'inbox',
  read: (db: SqlExecutor) => Promise<T>,
  idsOf: (answer: T) => readonly string[],
  texts = true,
): Promise<{ readonly answer: T; readonly exact: ReadonlyMap<string, JsonTexts> }> {
  if (!texts) return { answer: await read(db), exact: new Map() };
  // No `timeoutMs`: a plain BEGIN, so SET TRANSACTION is its first statement (the limits
  // withDeadlines would set first take a snapshot at READ COMMITTED). `maxWaitMs` bounds the wait
  // for a connection as core's transactions are (startWithin: FERRY_DATABASE_UNAVAILABLE, "no
  // connection for a transaction within"), not the pool's 10 s connect bound (review 134: a
  // server that never completed the connection held `show` for 10 s). Each statement is bounded
  // by the connection's statement_timeout and query_timeout (cli.ts), and every failure, BEGIN
  // and COMMIT included, translated as core's reads are (a lost connection is
  // FERRY_DATABASE_UNAVAILABLE). PostgreSQL ends the session once the transaction is left idle
  // for `timeoutMs` (SET LOCAL takes no snapshot), as core's transaction limits have it: a link
  // gone silent in the middle (the CLI gave up; PostgreSQL never heard) left the backend idle in
  // the transaction for good, its snapshot holding back vacuum and its locks every ALTER TABLE
  // of the table (review 103). Whole milliseconds (a duration may hold a fraction), inlined.
  return withTranslation(db, `${kind} read`).transaction(
    async (tx) => {
      await tx.execute(
        'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; ' +
          `SET LOCAL idle_in_transaction_session_timeout = '${Math.ceil(timeoutMs)}ms'`,
      );
      const answer = await read(tx);
      return { answer, exact: await jsonTexts(tx, timeoutMs, kind, idsOf(answer)) };
    },
    { maxWaitMs: timeoutMs },
  );
}
