import type { SqlExecutor, StatementOptions } from '../../sql/executor';
import type { FailedHeadPolicy } from '../options';
import { BLOCK_READY, CLAIMED, NOT_A_CONSTANT_PENDING, SKIP_GUARD, SKIPPED } from './claimBatch';
import type { ClaimedRow } from './fragments';
import { BLOCKING, noneInFlight } from './keyScan';

/** Destinations one probe statement visits (one index probe each), round-robin from a cursor. */
export const PROBE_DESTINATIONS = 100;

/** A destination's name in outbox_events_due_destination_idx: '' for the default one (NULL). */
const DEST = (r: string) => `coalesce(${r}.destination, '')`;

/**
 * PENDING as the index's predicate spells it (the statuses it is not): only this statement proves
 * it. With `status = 'PENDING'`, the due index's predicate, and statistics from before a backlog
 * (PENDING rows rare), the planner took both indexes to be empty and read the probe's rows off the
 * due index, walking the whole dead backlog (test/outbox/probeCost.test.ts).
 */
const PENDING = (r: string) => `${r}.status NOT IN ('PROCESSING', 'SENT', 'FAILED')`;

/**
 * The half-open probe's claim while the broker refused some destinations ($6: their names, '' for
 * the default one): up to $1 rows, the oldest due heads of the other destinations. A dead
 * destination's backlog sits at the head of the due order however it got there (older than the
 * events emitted since, or handed back `unavailable` behind the rows due then but ahead of those
 * emitted later), so the oldest due row is nearly always one of it; read in due order, reaching
 * past it would cost its whole backlog.
 *
 * Instead, over outbox_events_due_destination_idx (coalesce(destination, ''), next_attempt_at,
 * seq of PENDING rows): the destinations with PENDING rows in name order from $7 (a loose index
 * scan, one probe each, at most $5, plus one for the next cursor), then for each destination not
 * refused its first $4 due rows (one range each). The cost grows with the destinations visited,
 * never with a destination's backlog. Of those rows the ones that head their key (as the claim's
 * due window asks it: the key's first blocking event, nothing of the key in flight) or have no
 * key are candidates, locked and claimed in due order as the claim does, with the same 'skip'
 * guard.
 */
function probeSql(policy: FailedHeadPolicy): string {
  const skip = policy === 'skip';
  return `WITH RECURSIVE dests AS (
    SELECT (SELECT ${DEST('d')} FROM outbox_events d
            WHERE ${PENDING('d')} AND ${DEST('d')} >= $7
            ORDER BY ${DEST('d')} LIMIT 1) AS name, 1 AS n
    UNION ALL
    SELECT (SELECT ${DEST('d')} FROM outbox_events d
            WHERE ${PENDING('d')} AND ${DEST('d')} > s.name
            ORDER BY ${DEST('d')} LIMIT 1), s.n + 1
    FROM dests s WHERE s.name IS NOT NULL AND s.n <= $5
  ), open_dests AS (
    SELECT s.name FROM dests s WHERE s.n <= $5 AND s.name IS NOT NULL AND s.name <> ALL ($6::text[])
  ), firsts AS (
    SELECT f.id, f.seq, f.ordering_key FROM open_dests s CROSS JOIN LATERAL (
      SELECT c.id, c.seq, c.ordering_key FROM outbox_events c
      WHERE ${DEST('c')} = s.name AND ${PENDING('c')} AND c.next_attempt_at <= now()
      ORDER BY ${DEST('c')}, c.next_attempt_at, c.seq LIMIT $4) f
  ), heads AS (
    SELECT f.id FROM firsts f WHERE f.ordering_key IS NULL
    UNION ALL
    SELECT f.id FROM firsts f
    WHERE f.ordering_key IS NOT NULL AND f.seq = (
        SELECT p.seq FROM outbox_events p
        WHERE p.ordering_key = f.ordering_key AND p.status IN (${BLOCKING[policy]})
        ORDER BY p.ordering_key, p.seq LIMIT 1)
      AND ${noneInFlight('f.ordering_key')}
  ), candidates AS (
    SELECT e.id FROM outbox_events e
    WHERE e.id = ANY (ARRAY(SELECT id FROM heads)) AND e.status = ${NOT_A_CONSTANT_PENDING}
    ORDER BY e.next_attempt_at, e.seq LIMIT $1
    FOR UPDATE SKIP LOCKED
  ) ${skip ? SKIP_GUARD : BLOCK_READY} ${CLAIMED} ${skip ? SKIPPED : ''}
  SELECT (SELECT s.name FROM dests s WHERE s.n = $5 + 1) AS next_destination,
    ${skip ? '(SELECT array_agg(id) FROM skipped)' : 'NULL::text[]'} AS skipped_ids, claimed.*
  FROM (SELECT 1) one LEFT JOIN claimed ON true ORDER BY claimed.seq::bigint`;
}

const PROBE: Record<FailedHeadPolicy, string> = { block: probeSql('block'), skip: probeSql('skip') };

export interface ProbeArgs {
  token: string;
  limit: number;
  leaseMs: number;
  failedHead: FailedHeadPolicy;
  /** Destinations the broker refused (null: the default one): their rows are not probed. */
  refused: readonly (string | null)[];
  /** The destination the round-robin visit starts at (null: the first). */
  cursor: string | null;
  statement?: StatementOptions;
}

export interface ProbeResult {
  readonly rows: ClaimedRow[];
  readonly skippedIds: string[];
  /** Where the next probe's visit starts (null: from the first destination). */
  readonly cursor: string | null;
}

async function probeStep(db: SqlExecutor, args: ProbeArgs, from: string): Promise<ProbeResult> {
  const result = await db.query<
    Partial<ClaimedRow> & { next_destination: string | null; skipped_ids: string[] | null }
  >(
    PROBE[args.failedHead],
    [
      args.limit,
      args.token,
      args.leaseMs,
      args.limit * 2,
      PROBE_DESTINATIONS,
      [...new Set(args.refused.map((d) => d ?? ''))],
      from,
    ],
    args.statement,
  );
  return {
    rows: result.filter((row): row is ClaimedRow & (typeof result)[number] => row.id != null),
    skippedIds: [...new Set(result.flatMap((row) => row.skipped_ids ?? []))],
    cursor: result[0]?.next_destination ?? null,
  };
}

/**
 * Claims up to `limit` rows for a half-open probe from the destinations not `refused` (see
 * probeSql), visiting at most PROBE_DESTINATIONS destinations per statement round-robin from
 * `cursor`; when a visit that did not start at the first destination finds nothing, once more
 * from the first. Claims nothing when every destination with due rows was refused.
 */
export async function probeClaim(db: SqlExecutor, args: ProbeArgs): Promise<ProbeResult> {
  const first = await probeStep(db, args, args.cursor ?? '');
  if (first.rows.length > 0 || args.cursor === null) return first;
  return probeStep(db, args, '');
}
