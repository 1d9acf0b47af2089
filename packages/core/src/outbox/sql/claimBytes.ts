/**
 * A claim's payload bytes as the relay receives them: the length of `payload::text` (what the
 * claim returns, CLAIMED_COLUMNS), not pg_column_size (the stored, possibly compressed size,
 * which under-counts a compressible payload many times over).
 */
const PAYLOAD_BYTES = `octet_length(p.payload::text)::bigint`;

/**
 * The byte bound of every claim statement (claimBatch, probeClaim): of the rows `ready` holds
 * (locked, claimable), those taken in due order while their payloads' running total stays within
 * `bytes` (a parameter); the first one whatever its size when `first` (a boolean parameter) is
 * true, so an event larger than the bound is still claimed, alone. Defines `within` (the ids to
 * claim) and `within_bytes` (n, total: the running total after the n-th row); BYTE_COLUMNS reads
 * them.
 *
 * A recursive walk that stops at the first row over the bound: it reads the payloads of the rows
 * it claims and of one more, never every candidate's (a backlog of 16 MiB events would cost each
 * claim `limit` × 16 MiB of detoasting and text conversion for a few rows). Each step fetches its
 * row by the ctid `candidates` locked, a TID scan (cheaper than a primary-key probe per step: about
 * 7 µs a row, 4 ms of a 500-row claim of small events on a 50k backlog under EXPLAIN ANALYZE); a
 * payload is never changed after emit, so any version the ctid names has the row's payload, and the
 * rows claimed are named by id. The rows it leaves out stay PENDING, never updated; their row
 * locks end with the statement (or the caller's transaction), like those of candidates the 'skip'
 * guard leaves out.
 */
export const withinBytes = (bytes: string, first: string): string => `
  , ready_order AS (
    SELECT array_agg(c.id ORDER BY c.next_attempt_at, c.seq) AS ids,
      array_agg(c.ctid ORDER BY c.next_attempt_at, c.seq) AS rows FROM candidates c
    WHERE c.id IN (SELECT id FROM ready)
  ), within_bytes AS (
    SELECT 1 AS n, s.bytes AS total FROM ready_order o CROSS JOIN LATERAL (
      SELECT ${PAYLOAD_BYTES} AS bytes FROM outbox_events p WHERE p.ctid = o.rows[1]) s
    WHERE ${first}::boolean OR s.bytes <= ${bytes}::bigint
    UNION ALL
    SELECT b.n + 1, b.total + s.bytes FROM within_bytes b CROSS JOIN ready_order o CROSS JOIN LATERAL (
      SELECT ${PAYLOAD_BYTES} AS bytes FROM outbox_events p WHERE p.ctid = o.rows[b.n + 1]) s
    WHERE b.total + s.bytes <= ${bytes}::bigint
  ), within AS (
    SELECT o.ids[b.n] AS id FROM within_bytes b CROSS JOIN ready_order o
  )`;

/**
 * The statement's byte columns: `claimed_bytes`, the payload bytes it claimed; `bytes_full`,
 * whether the bound left out a claimable row (the claim is full: no further statement).
 */
export const BYTE_COLUMNS = `coalesce((SELECT max(total) FROM within_bytes), 0)::text AS claimed_bytes,
    (SELECT count(*) FROM within) < (SELECT count(*) FROM ready) AS bytes_full`;

/** What a claim statement's byte columns say (BYTE_COLUMNS). */
export interface ByteState {
  readonly claimedBytes: number;
  readonly bytesFull: boolean;
}

export function byteState(
  row: { claimed_bytes?: string | null; bytes_full?: boolean | null } | undefined,
): ByteState {
  return { claimedBytes: Number(row?.claimed_bytes ?? 0), bytesFull: row?.bytes_full === true };
}
