import type { SqlExecutor } from '../../sql/executor';
import { TABLE, type ReceiptRow, type ReceiptShape } from './fragments';
import type { ReceiptKey } from '../types';
import { INBOX_CHANNEL } from '../wakeup';
import { statementRuns } from '../../sql/statementRuns';

/** A receipt to insert; `payloadJson` and `headersJson` are JSON.stringify output. */
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

/** What one insert statement found: whether the batch was admitted, the rows it wrote and read. */
export interface InsertResult<R extends ReceiptKey> {
  /** False when the backlog had reached the admission limit: nothing was inserted. */
  readonly admitted: boolean;
  /** Receipts this statement inserted. */
  readonly inserted: R[];
  /** Receipts of the batch's identities that existed before the statement (its snapshot). */
  readonly existing: R[];
}

/**
 * One statement and one round trip for the whole batch (one per run of MAX_STATEMENT_TEXT_CHARS
 * characters of JSON, statementRuns, for a batch with more: the admission gate counted by the
 * first only, see insertReceipts):
 * - `input`: the receipts, $1 one JSON array of objects (inputJson), payload and headers
 *   embedded as JSON values: one parameter to encode instead of nine text arrays to escape;
 *   read as jsonb (parsed once), or as json above JSONB_MAX_CHARS (see there);
 * - `gate`: the admission check, the unfinished receipts counted up to $3 (maxPendingMessages;
 *   NULL: no limit, nothing counted); at the limit nothing is inserted. Counted in created_at
 *   order, which only the backlog index (its partial index) gives: unordered, and with
 *   statistics from a burst (every row PENDING), the planner counted with a sequential scan,
 *   which reads the COMPLETED history stored before the backlog (2,000 more rows of work for
 *   each 2,000 receipts of history; test/inbox/maintenanceCost.test.ts);
 * - `inserted`: the new rows; identities that exist are skipped (ON CONFLICT DO NOTHING), so
 *   one committed by a concurrent batch after this statement's snapshot is in neither list.
 *   Rows are inserted in identity order (scope, consumer, message id; byte order), so two
 *   concurrent batches that share identities take the unique-index locks in the same order and
 *   cannot deadlock (40P01), whatever order their callers gave;
 * - `existing`: the receipts the batch's identities already had (duplicates, conflicts), read
 *   from the statement's snapshot (it does not see `inserted`), only when some row was not
 *   inserted: a batch of new messages costs no lookups. One identity-index probe per distinct
 *   identity of the batch: the LATERAL sub-select with its LIMIT (an identity is unique) is not
 *   flattened into a join, which the planner hash-joined against a sequential scan of the whole
 *   table while it took the table for small (or had no statistics);
 * - when any row is new, INBOX_CHANNEL is notified (delivered at commit) to wake LISTENing workers.
 * The result always has the gate's row; `fresh` is null there when no receipt came with it.
 * Receipts are read back with `columns` (a ReceiptShape's).
 */
const sql = (columns: string, input: 'json' | 'jsonb') => `
  WITH input AS (
    SELECT * FROM ${input}_to_recordset($1::${input})
      AS i(t text, c text, m text, mt text, ms text, p jsonb, f text, b int, h jsonb)
  ),
  gate AS (
    SELECT $3::int IS NULL OR (
      SELECT count(*) FROM (
        SELECT 1 FROM ${TABLE} WHERE status IN ('PENDING', 'RETRYABLE', 'PROCESSING')
        ORDER BY created_at LIMIT $3::int
      ) AS backlog
    ) < $3::int AS admitted
  ),
  inserted AS (
    INSERT INTO ${TABLE} (tenant_id, consumer, message_id, message_type, messaging_system, payload,
                          payload_fingerprint, payload_bytes, headers, max_attempts)
    SELECT t, c, m, mt, ms, p, f, b, h, $2::int
    FROM input
    WHERE (SELECT admitted FROM gate)
    ORDER BY coalesce('tenant:' || t, 'global') COLLATE "C", c COLLATE "C", m COLLATE "C"
    ON CONFLICT (scope, consumer, message_id) DO NOTHING
    RETURNING ${columns}
  ),
  existing AS (
    SELECT receipt.* FROM (SELECT DISTINCT coalesce('tenant:' || t, 'global') AS s, c, m FROM input) AS i
    CROSS JOIN LATERAL (
      SELECT ${columns} FROM ${TABLE}
      WHERE scope = i.s AND consumer = i.c AND message_id = i.m
      LIMIT 1
    ) AS receipt
    WHERE (SELECT count(*) FROM inserted) < (SELECT count(*) FROM input)
  )
  SELECT gate.admitted, found.*,
    (SELECT pg_notify('${INBOX_CHANNEL}', '')::text WHERE EXISTS (SELECT 1 FROM inserted)) AS woken
  FROM gate LEFT JOIN (
    SELECT true AS fresh, inserted.* FROM inserted
    UNION ALL
    SELECT false AS fresh, existing.* FROM existing
  ) AS found ON true`;

/**
 * The longest $1 read as jsonb. One jsonb array holds at most 268,435,455 bytes of elements
 * (PostgreSQL's JENTRY_OFFLENMASK; beyond it the statement fails with 54000 and so would a batch
 * of valid receipts), and jsonb takes at most 6 bytes per character of JSON text (a one-digit
 * number); a longer $1 is read as json, only scanned, each payload and headers value becoming
 * jsonb on its own (as when each was a text array element), which costs a little more CPU.
 */
const JSONB_MAX_CHARS = 32 * 1024 * 1024;

type Row = { admitted: boolean; fresh: boolean | null } & ReceiptRow;

export async function insertReceipts<R extends ReceiptKey>(
  db: SqlExecutor,
  receipts: readonly NewReceipt[],
  limits: { readonly maxAttempts: number; readonly maxPendingMessages: number | null },
  shape: ReceiptShape<R>,
): Promise<InsertResult<R>> {
  // Each run commits on its own (in one transaction, Prisma's interactive transaction timeout
  // ended a call of 256 MiB): a call failing part way leaves the runs before it stored, which a
  // retry of the call answers as duplicates.
  return insertRuns(
    db,
    statementRuns(inputRows(receipts), (row) => row.length),
    limits,
    shape,
  );
}

/** insertReceipts' statements, one per run of input rows, in order. */
async function insertRuns<R extends ReceiptKey>(
  db: SqlExecutor,
  runs: readonly string[][],
  limits: { readonly maxAttempts: number; readonly maxPendingMessages: number | null },
  shape: ReceiptShape<R>,
): Promise<InsertResult<R>> {
  let admitted = true;
  const inserted: R[] = [];
  const existing: R[] = [];
  // The call's admission is its first statement's: once admitted, the later runs are not
  // counted again (their own receipts would refuse the rest of the call); once refused, each run
  // is refused too (a limit of 0, which no backlog is under: counted again, a backlog drained
  // meanwhile admitted the call's later runs, review 138), its existing receipts still read
  // (duplicates and conflicts are answered).
  let gate = limits.maxPendingMessages;
  for (const run of runs) {
    const input = `[${run.join(',')}]`;
    const rows = await db.query<Row>(sql(shape.columns, input.length > JSONB_MAX_CHARS ? 'json' : 'jsonb'), [
      input,
      limits.maxAttempts,
      gate,
    ]);
    if (rows[0]?.admitted === false) {
      admitted = false;
      gate = 0;
    } else gate = null;
    inserted.push(...rows.filter((row) => row.fresh === true).map(shape.read));
    existing.push(...rows.filter((row) => row.fresh === false).map(shape.read));
  }
  return { admitted, inserted, existing };
}

/**
 * Each receipt's object in the $1 of the statement, a JSON array (see `input`). The tenant,
 * consumer, type and system of a batch's receipts are mostly the same few strings: each is
 * written as JSON text once per call.
 */
function inputRows(receipts: readonly NewReceipt[]): string[] {
  const written = new Map<string, string>();
  const shared = (value: string | null): string => {
    if (value === null) return 'null';
    let text = written.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      written.set(value, text);
    }
    return text;
  };
  return receipts.map(
    (r) =>
      `{"t":${shared(r.tenantId)},"c":${shared(r.consumer)},"m":${JSON.stringify(r.messageId)},` +
      `"mt":${shared(r.messageType)},"ms":${shared(r.system)},"p":${r.payloadJson},` +
      `"f":${JSON.stringify(r.fingerprint)},"b":${r.payloadBytes},"h":${r.headersJson}}`,
  );
}
