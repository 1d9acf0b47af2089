/**
 * A candidate's payload bytes, as a column of the `candidates` step (`e`: the outbox row): the
 * larger of payload_bytes, the bytes of the payload's text as the claim returns it (PostgreSQL's
 * jsonb text) as emit measured it (migration 0012), and the payload's stored size, pg_column_size:
 * read off the value's header or TOAST pointer, never detoasting the payload (a backlog of 16 MiB
 * events would otherwise cost each claim `limit` × 16 MiB of reading).
 *
 * The stored size is a floor because payload_bytes is a column anyone can write: a row inserted
 * by SQL with a negative payload_bytes let the running total fall, so the rows after it (after
 * one over the bound too) joined the claim, and one with 0 made its payload weigh nothing
 * (review 144). A row without payload_bytes (stored before 0012, or inserted by SQL or an
 * older emitter without it) counts its stored size alone. What stays unbounded by this check is
 * what compression hides: such a row, or one whose payload_bytes lies small, counts the compressed
 * size of a compressed payload, which may be many times smaller than its text
 * (docs/outbox.md, maxBatchBytes).
 */
export const candidateBytes = (e: string): string =>
  `greatest(coalesce(${e}.payload_bytes, 0), pg_column_size(${e}.payload)) AS payload_bytes`;

/**
 * The byte bound of every claim statement (claimBatch, probeClaim): of the rows `ready` holds
 * (locked, claimable), those taken in due order while their payloads' running total stays within
 * `bytes` (a parameter); the first one whatever its size when `first` (a boolean parameter) is
 * true, so an event larger than the bound is still claimed, alone. Defines `within_bytes` (every
 * ready row with n, its place in due order, and total, the running total through it) and `within`
 * (the ids to claim, with their total); BYTE_COLUMNS reads them.
 *
 * A window sum over the sizes `candidates` already read (candidateBytes): no payload is read, and
 * the cost per row is the sort and sum's (a recursive walk that fetched each row again cost about
 * 7 µs a row, +30% of PostgreSQL's CPU per event relayed). No size is negative (candidateBytes), so
 * the running total only grows and the rows within the bound are a prefix of the due order. The rows it leaves out stay PENDING, never
 * updated; their row locks end with the statement (or the caller's transaction), like those of
 * candidates the 'skip' guard leaves out.
 */
export const withinBytes = (bytes: string, first: string): string => `
  , within_bytes AS (
    SELECT c.id, row_number() OVER due AS n, sum(c.payload_bytes) OVER due AS total FROM candidates c
    WHERE c.id IN (SELECT id FROM ready)
    WINDOW due AS (ORDER BY c.next_attempt_at, c.seq ROWS UNBOUNDED PRECEDING)
  ), within AS (
    SELECT b.id, b.total FROM within_bytes b
    WHERE b.total <= ${bytes}::bigint OR (b.n = 1 AND ${first}::boolean)
  )`;

/**
 * The statement's byte columns: `claimed_bytes`, the payload bytes it claimed; `bytes_full`,
 * whether the bound left out a claimable row (the claim is full: no further statement).
 */
export const BYTE_COLUMNS = `coalesce((SELECT max(total) FROM within), 0)::text AS claimed_bytes,
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
