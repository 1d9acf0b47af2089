import type { SqlExecutor, StatementOptions } from '../../sql/executor';
import type { FailedHeadPolicy } from '../options';
import { BLOCK_READY, claimed, NOT_A_CONSTANT_PENDING, SKIP_GUARD, SKIPPED } from './claimBatch';
import { BYTE_COLUMNS, candidateBytes } from './claimBytes';
import type { ClaimedRow } from './fragments';
import { BLOCKING, keyScan, LANE_LAST_JOIN, noneInFlight } from './keyScan';

/** Destinations one visit of the probe reads (one index probe each), round-robin from a cursor. */
export const PROBE_DESTINATIONS = 100;

/**
 * Due rows one probe statement reads at most over all the destinations it reads (never fewer
 * than 2 × the probe's limit per destination): a destination's events that wait behind their keys
 * (a key spanning a refused destination and this one) are read past, up to a share of this.
 */
export const PROBE_ROWS = 1_000;

/**
 * A destination's key in outbox_events_due_destination_idx (migration 0011): its first 512
 * characters, '' for the default one (NULL). Bounded so that a PENDING row inserted by SQL with an
 * overlong destination (which the relay FAILs alone) stays under a btree entry's ~2,700 bytes: 512
 * characters of up to 4 UTF-8 bytes each; every destination emit() writes is at most 512
 * characters (ENVELOPE_LIMIT_BOUNDS), so for those the key is the name. Must stay the index's
 * expression, character for character, or the planner cannot use the index.
 */
const DEST = (r: string) => `left(coalesce(${r}.destination, ''), 512)`;

/** The refused destinations (parameter `p`, $6 unless given) as index keys. */
const REFUSED = (p = '$6') => `ARRAY(SELECT left(r, 512) FROM unnest(${p}::text[]) r)`;

/**
 * PENDING as the index's predicate spells it (the statuses it is not): only this statement proves
 * it. With `status = 'PENDING'`, the due index's predicate, and statistics from before a backlog
 * (PENDING rows rare), the planner took both indexes to be empty and read the probe's rows off the
 * due index, walking the whole dead backlog (test/outbox/probeCost.test.ts).
 */
const PENDING = (r: string) => `${r}.status NOT IN ('PROCESSING', 'SENT', 'FAILED')`;

/**
 * The destinations a visit reads ($8: where it starts), with their rank `ord`: those with PENDING
 * rows in key order from $8 (a loose index scan, one probe each, at most $7, plus one for the next
 * cursor), less the refused ones ($6).
 */
const VISIT = `RECURSIVE dests AS (
    SELECT (SELECT ${DEST('d')} FROM outbox_events d
            WHERE ${PENDING('d')} AND ${DEST('d')} >= $8
            ORDER BY ${DEST('d')} LIMIT 1) AS name, 1 AS n
    UNION ALL
    SELECT (SELECT ${DEST('d')} FROM outbox_events d
            WHERE ${PENDING('d')} AND ${DEST('d')} > s.name
            ORDER BY ${DEST('d')} LIMIT 1), s.n + 1
    FROM dests s WHERE s.name IS NOT NULL AND s.n <= $7
  ), read_dests AS (
    SELECT s.name, s.n AS ord FROM dests s
    WHERE s.n <= $7 AND s.name IS NOT NULL AND s.name <> ALL (${REFUSED()})
  )`;

/** The refused destinations ($6) themselves, ranked as given (least recently refused first). */
const REFUSED_TURN = `read_dests AS (
    SELECT r.name, r.ord FROM unnest(${REFUSED()}) WITH ORDINALITY r(name, ord)
  )`;

type Phase = 'others' | 'refused';
type Step = Phase | 'keys';

/** Each step's own parameters, before the byte bound's two (byteParams). */
const STEP_PARAMS: Record<Step, number> = { others: 8, refused: 6, keys: 7 };

/** The byte bound's parameters (withinBytes), after the step's own: the bytes, and `first` (true). */
function byteParams(step: Step): [string, string] {
  return [`$${STEP_PARAMS[step] + 1}`, `$${STEP_PARAMS[step] + 2}`];
}

/**
 * The half-open probe's claim while the broker refused some destinations ($6: their names, '' for
 * the default one): up to $1 rows. A dead destination's backlog sits at the head of the due order
 * however it got there (older than the events emitted since, or handed back `unavailable` behind
 * the rows due then but ahead of those emitted later), so the oldest due row is nearly always one
 * of it; read in due order, reaching past it would cost its whole backlog.
 *
 * Instead, over outbox_events_due_destination_idx (DEST, next_attempt_at, seq of PENDING rows):
 * phase 'others' reads the destinations of a visit (VISIT), phase 'refused' the refused ones
 * (REFUSED_TURN); of each, its first due rows (one range each), at most
 * max($4, $5 / destinations read). The cost grows with the destinations read and $5, never with
 * a destination's backlog. Of those rows the ones that head their key (as the claim's due window
 * asks it: the key's first blocking event, nothing of the key in flight) or have no key are
 * candidates: for 'others' up to $1 of them, each destination's first before a second of any, in
 * visit order; for 'refused' up to $1 of the first-ranked destination that has any, in due order
 * (one refused destination per probe, in turn); locked and claimed in due order as the claim
 * does, with the same 'skip' guard.
 */
function probeSql(policy: FailedHeadPolicy, phase: Phase): string {
  const skip = policy === 'skip';
  // 'others': every visited destination's oldest head before a second one of any, in visit order
  // (from the cursor), so that a destination's head is claimed whenever its visit comes round,
  // however old the rows of the destinations before it (review 61: a dead destination the
  // refused list forgot); 'refused': the first-ranked destination's heads in due order.
  const chosen =
    phase === 'others'
      ? 'SELECT id FROM heads ORDER BY rn, ord, next_attempt_at, seq LIMIT $1'
      : 'SELECT id FROM heads WHERE ord = (SELECT min(ord) FROM heads) ORDER BY next_attempt_at, seq LIMIT $1';
  const next = phase === 'others' ? '(SELECT s.name FROM dests s WHERE s.n = $7 + 1)' : 'NULL::text';
  return `WITH ${phase === 'others' ? VISIT : REFUSED_TURN}, firsts AS (
    SELECT s.ord, f.id, f.seq, f.next_attempt_at, f.ordering_key FROM read_dests s CROSS JOIN LATERAL (
      SELECT c.id, c.seq, c.next_attempt_at, c.ordering_key FROM outbox_events c
      WHERE ${DEST('c')} = s.name AND ${PENDING('c')} AND c.next_attempt_at <= now()
      ORDER BY ${DEST('c')}, c.next_attempt_at, c.seq
      LIMIT (SELECT greatest($4::int, $5::int / greatest(count(*), 1)::int) FROM read_dests)) f
  ), found AS (
    SELECT f.id, f.ord, f.seq, f.next_attempt_at FROM firsts f WHERE f.ordering_key IS NULL
    UNION ALL
    SELECT f.id, f.ord, f.seq, f.next_attempt_at FROM firsts f
    WHERE f.ordering_key IS NOT NULL AND f.seq = (
        SELECT p.seq FROM outbox_events p
        WHERE p.ordering_key = f.ordering_key AND p.status IN (${BLOCKING[policy]})
        ORDER BY p.ordering_key, p.seq LIMIT 1)
      AND ${noneInFlight('f.ordering_key')}
  ), heads AS (
    SELECT h.*, row_number() OVER (PARTITION BY h.ord ORDER BY h.next_attempt_at, h.seq) AS rn
    FROM found h
  ), candidates AS (
    SELECT e.id, e.next_attempt_at, e.seq, ${candidateBytes('e')} FROM outbox_events e
    WHERE e.id = ANY (ARRAY(${chosen})) AND e.status = ${NOT_A_CONSTANT_PENDING}
    ORDER BY e.next_attempt_at, e.seq
    FOR UPDATE SKIP LOCKED
  ) ${skip ? SKIP_GUARD : BLOCK_READY} ${claimed(...byteParams(phase))} ${skip ? SKIPPED : ''}
  SELECT ${next} AS next_destination, NULL::text AS next_key, ${BYTE_COLUMNS},
    ${skip ? '(SELECT array_agg(id) FROM skipped)' : 'NULL::text[]'} AS skipped_ids, claimed.*
  FROM (SELECT 1) one LEFT JOIN claimed ON true ORDER BY claimed.seq::bigint`;
}

/**
 * Step 1's fallback through the ordering index (review 61): a key whose head is not claimable
 * (FAILED under 'block', in flight, behind a refused event) holds back every event of it, and a
 * destination's due rows read in due order may all be such events (a budget full of one blocked
 * key), so its other keys' heads are never read. Here the closed claim's key scan (keyScan.ts):
 * keys round-robin from the key cursor $6, one ordering-index probe each, at most $5; of the heads
 * it finds, those of a destination not refused ($7) are claimed, up to $4, in due order. $1 only
 * stops the scan (at $5 too). The cost grows with $5, never with a key's or destination's backlog.
 */
function keysSql(policy: FailedHeadPolicy): string {
  const skip = policy === 'skip';
  return `WITH RECURSIVE ${keyScan(policy, true)}, candidates AS (
    SELECT e.id, e.next_attempt_at, e.seq, ${candidateBytes('e')} FROM outbox_events e
    WHERE e.id = ANY (ARRAY(SELECT id FROM lane_heads)) AND e.status = ${NOT_A_CONSTANT_PENDING}
      AND ${DEST('e')} <> ALL (${REFUSED('$7')})
    ORDER BY e.next_attempt_at, e.seq LIMIT $4
    FOR UPDATE SKIP LOCKED
  ) ${skip ? SKIP_GUARD : BLOCK_READY} ${claimed(...byteParams('keys'))} ${skip ? SKIPPED : ''}
  SELECT NULL::text AS next_destination, last.k AS next_key, ${BYTE_COLUMNS},
    ${skip ? '(SELECT array_agg(id) FROM skipped)' : 'NULL::text[]'} AS skipped_ids, claimed.*
  FROM (SELECT 1) one ${LANE_LAST_JOIN} LEFT JOIN claimed ON true ORDER BY claimed.seq::bigint`;
}

/** Keys step 1's fallback scans at most per probe (one ordering-index probe each). */
export const PROBE_KEYS = 1_000;

const PROBE: Record<Step, Record<FailedHeadPolicy, string>> = {
  others: { block: probeSql('block', 'others'), skip: probeSql('skip', 'others') },
  refused: { block: probeSql('block', 'refused'), skip: probeSql('skip', 'refused') },
  keys: { block: keysSql('block'), skip: keysSql('skip') },
};

export interface ProbeArgs {
  token: string;
  limit: number;
  /** Payload bytes the probe takes at most, always at least one row (ClaimArgs.maxBytes). */
  maxBytes?: number;
  leaseMs: number;
  failedHead: FailedHeadPolicy;
  /**
   * Destinations the broker refused (null: the default one), least recently refused first: their
   * rows are probed only when no other destination has a claimable one, one destination per
   * probe, the first in this order that has one.
   */
  refused: readonly (string | null)[];
  /** The destination the round-robin visit starts at (null: the first). */
  cursor: string | null;
  /** The ordering key step 1's fallback key scan starts after (null or absent: the first). */
  keyCursor?: string | null;
  statement?: StatementOptions;
}

export interface ProbeResult {
  readonly rows: ClaimedRow[];
  readonly skippedIds: string[];
  /** Where the next probe's visit starts (null: from the first destination). */
  readonly cursor: string | null;
  /** Where the next probe's key scan starts (null: from the first key). */
  readonly keyCursor: string | null;
}

function params(args: ProbeArgs, step: Step, from: string): unknown[] {
  const refused = [...new Set(args.refused.map((d) => d ?? ''))];
  // A probe is a claim of its own (the relay claims nothing else that cycle): its first row is
  // taken whatever its size.
  const bytes = [args.maxBytes ?? Number.MAX_SAFE_INTEGER, true];
  if (step === 'keys')
    return [
      PROBE_KEYS,
      args.token,
      args.leaseMs,
      args.limit,
      PROBE_KEYS,
      args.keyCursor ?? null,
      refused,
      ...bytes,
    ];
  const base = [args.limit, args.token, args.leaseMs, args.limit * 2, PROBE_ROWS, refused];
  return step === 'others' ? [...base, PROBE_DESTINATIONS, from, ...bytes] : [...base, ...bytes];
}

async function probeStep(db: SqlExecutor, args: ProbeArgs, step: Step, from = ''): Promise<ProbeResult> {
  const result = await db.query<
    Partial<ClaimedRow> & {
      next_destination: string | null;
      next_key: string | null;
      skipped_ids: string[] | null;
    }
  >(PROBE[step][args.failedHead], params(args, step, from), args.statement);
  return {
    rows: result.filter((row): row is ClaimedRow & (typeof result)[number] => row.id != null),
    skippedIds: [...new Set(result.flatMap((row) => row.skipped_ids ?? []))],
    cursor: result[0]?.next_destination ?? null,
    keyCursor: result[0]?.next_key ?? null,
  };
}

/**
 * Claims up to `limit` rows for a half-open probe (see probeSql): from the destinations not
 * `refused`, visiting at most PROBE_DESTINATIONS of them round-robin from `cursor` (each one's
 * oldest head before a second of any, in visit order), and when a visit that did not start at
 * the first destination finds nothing, once more from the first (the next visit then starts where
 * the first one ended, so every probe moves on); when that finds nothing either, the heads of the
 * destinations not refused through the ordering index (keysSql: PROBE_KEYS keys round-robin from
 * `keyCursor`), so that a key blocked behind its head does not hide a destination's other keys;
 * then from one refused destination, the first of `refused` with a claimable due row, so that
 * every refused destination is probed again in turn (a refusal is forgotten only when a publish
 * of it is answered). At most four statements.
 */
export async function probeClaim(db: SqlExecutor, args: ProbeArgs): Promise<ProbeResult> {
  const keyCursor = args.keyCursor ?? null;
  const first = await probeStep(db, args, 'others', args.cursor ?? '');
  if (first.rows.length > 0) return { ...first, keyCursor };
  let cursor = first.cursor;
  if (args.cursor !== null) {
    const again = await probeStep(db, args, 'others', '');
    cursor = first.cursor ?? again.cursor;
    if (again.rows.length > 0) return { ...again, cursor, keyCursor };
  }
  const keys = await probeStep(db, args, 'keys');
  if (keys.rows.length > 0) return { ...keys, cursor };
  const turn = await probeStep(db, args, 'refused');
  return { ...turn, cursor, keyCursor: keys.keyCursor };
}
