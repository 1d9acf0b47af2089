import type { SqlExecutor } from '@ferry/core';

/** Rows as ferry stores them, inserted by SQL: a state (or a payload) the test needs in one statement. */
export interface EventRow {
  readonly tenant?: string;
  readonly status?: 'PENDING' | 'SENT' | 'FAILED';
  /** jsonb text, as PostgreSQL takes it (`{"n": 1e400}`). */
  readonly payload?: string;
  readonly headers?: string;
}

/** An outbox event of type order.placed (PENDING, tenant acme, payload `{}` unless told). */
export async function insertEvent(db: SqlExecutor, row: EventRow = {}): Promise<string> {
  const [inserted] = await db.query<{ id: string }>(
    `INSERT INTO outbox_events (id, event_type, payload, headers, tenant_id, max_retries, status,
       published_at, failed_at)
     VALUES (gen_random_uuid(), 'order.placed', $1::jsonb, $2::jsonb, $3, 5, $4,
       CASE WHEN $4 = 'SENT' THEN now() END, CASE WHEN $4 = 'FAILED' THEN now() END)
     RETURNING id::text`,
    [row.payload ?? '{}', row.headers ?? '{}', row.tenant ?? 'acme', row.status ?? 'PENDING'],
  );
  return inserted!.id;
}

export interface ReceiptRow {
  readonly status?: 'PENDING' | 'COMPLETED' | 'DEAD';
  readonly version?: number;
  /** jsonb text; null: purged (a COMPLETED receipt's only). */
  readonly payload?: string | null;
  readonly headers?: string;
}

/** An inbox receipt of tenant acme for consumer `work` (COMPLETED at version 2, payload `{}` unless told). */
export async function insertReceipt(
  db: SqlExecutor,
  row: ReceiptRow = {},
): Promise<{ id: string; version: number }> {
  const [inserted] = await db.query<{ id: string; row_version: number }>(
    `INSERT INTO ferry_inbox_receipts (tenant_id, consumer, message_id, payload, payload_fingerprint,
       payload_bytes, headers, status, attempts, max_attempts, row_version, completed_at, dead_at,
       payload_purged_at)
     VALUES ('acme', 'work', gen_random_uuid()::text, $1::jsonb, 'fp', 2, $2::jsonb, $3, 1, 5, $4,
       CASE WHEN $3 = 'COMPLETED' THEN now() END, CASE WHEN $3 = 'DEAD' THEN now() END,
       CASE WHEN $1::jsonb IS NULL THEN now() END)
     RETURNING id::text, row_version`,
    [
      row.payload === undefined ? '{}' : row.payload,
      row.headers ?? '{}',
      row.status ?? 'COMPLETED',
      row.version ?? 2,
    ],
  );
  return { id: inserted!.id, version: inserted!.row_version };
}

/** Rows of the operator audit trail: a command refused before anything changed adds none. */
export async function auditRows(db: SqlExecutor): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM ferry_operator_audit');
  return row!.n;
}
