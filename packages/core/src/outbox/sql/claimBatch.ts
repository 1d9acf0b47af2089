import type { SqlExecutor, StatementOptions } from '../../sql/executor';
import { LEASE_COMMIT_COLUMN } from '../../sql/leaseCommit';
import type { FailedHeadPolicy } from '../options';
import { CLAIMED_COLUMNS, msInterval, opaqueStatus, saturatingIncrement, type ClaimedRow } from './fragments';
import { BLOCKING, keyScan, LANE_LAST_JOIN, LANE_STATE, noneInFlight } from './keyScan';
import { BYTE_COLUMNS, byteState, candidateBytes, withinBytes, type ByteState } from './claimBytes';

/**
 * Row `r` sorts no later than the due window's last row, or the window holds every due row. A
 * keyed head that is due that early is in the window; one due later may be anywhere, so without
 * the key scan only rows this early are candidates (a steady unkeyed stream would otherwise fill
 * every claim while an older keyed head behind a window of blocked rows waits for ever).
 *
 * Only a keyed row can be overtaken that way, so a window without one has no edge: then every
 * keyed row is due after the whole window, and the unkeyed rows past it (typically those beyond
 * the rows concurrent claims hold) are taken in due order, as the key-scan statement takes them.
 *
 * The edge is one row (the window's last, or past every due row when the window is not full or
 * holds no keyed row), compared as two scalar subqueries: the planner evaluates them once per
 * statement and the comparison becomes the unkeyed scan's index condition, so the scan stops at
 * the edge. As a per-row NOT EXISTS it did not: with the window's rows locked by concurrent
 * claims (skipped) the scan walked the whole backlog, re-sorting the window per row when
 * statistics were stale.
 */
const inWindow = (r: string) =>
  `(${r}.next_attempt_at, ${r}.seq) <= ((SELECT x.at FROM window_edge x), (SELECT x.seq FROM window_edge x))`;

/**
 * 'PENDING' as a sub-select (evaluated once), not a literal: with `status = 'PENDING'` the planner
 * may read the candidates off the due index (its predicate), in due order, with the pool's ids as a
 * filter, and with statistics that take PENDING rows to be rare (analyzed before a burst) it did,
 * walking the whole backlog whenever the pool was short. Unable to prove the partial indexes'
 * predicates, it has only the primary key to look the ids up by.
 */
export const NOT_A_CONSTANT_PENDING = opaqueStatus('PENDING');

/**
 * 'FAILED' the same way, beside a literal IN the ordering index's predicate: of the partial
 * indexes only that one is provable, so the FAILED events before a candidate are read off its own
 * key's entries, not by walking every FAILED event (the FAILED index) per candidate.
 */
const NOT_A_CONSTANT_FAILED = opaqueStatus('FAILED');

/**
 * Candidate heads, from three sources whose cost does not grow with the rows a blocked key
 * holds: (1) the first $4 due rows in due order, of each key only the earliest (a later one
 * has a PENDING event before it), kept when it heads its key; (2) unkeyed due rows, locked as
 * they are scanned and skipping rows another claim holds (so concurrent relays on an unkeyed
 * backlog each fill their batch instead of colliding on the same rows); (3) the key scan
 * (keyScan: keys round-robin from the cursor $6, one index probe each, at most $5), which is
 * what reaches other keys when a long blocked backlog fills the due window. The limit applies
 * after locking (a candidate another claim holds is skipped without taking a place).
 *
 * A window row heads its key when it is the first of its key's events in a blocking status (it
 * is PENDING, blocking itself, so its key has a first): asked per row as a subquery, ORDER BY ...
 * LIMIT 1, that only the ordering index answers cheaply. As NOT EXISTS an earlier blocking event
 * it became an anti-join, and with statistics that take ordering_key to be NULL (analyzed before
 * a keyed burst) the planner read the whole ordering index once per window row.
 *
 * Candidates and the claimed rows are looked up by primary key (`id = ANY (ARRAY(...))`, an
 * index probe per id), never by joining the pool against the table: the planner chose a
 * sequential scan of the whole table for that join, a cost that grew with the backlog.
 */
function candidateSources(policy: FailedHeadPolicy, lanes: boolean): string {
  const blocking = BLOCKING[policy];
  return `${keyScan(policy, lanes)}, due_window AS (
    SELECT c.id, c.seq, c.next_attempt_at, c.ordering_key FROM outbox_events c
    WHERE c.status = 'PENDING' AND c.next_attempt_at <= now()
    ORDER BY c.next_attempt_at, c.seq LIMIT $4
  ), window_edge AS (
    SELECT coalesce(e.next_attempt_at, 'infinity'::timestamptz) AS at,
           coalesce(e.seq, 9223372036854775807::bigint) AS seq
    FROM (SELECT 1) one LEFT JOIN (
      SELECT w.next_attempt_at, w.seq FROM due_window w
      WHERE EXISTS (SELECT 1 FROM due_window k WHERE k.ordering_key IS NOT NULL)
      ORDER BY w.next_attempt_at, w.seq OFFSET $4 - 1 LIMIT 1
    ) e ON true
  ), window_firsts AS (
    SELECT DISTINCT ON (w.ordering_key) w.id, w.seq, w.next_attempt_at, w.ordering_key FROM due_window w
    WHERE w.ordering_key IS NOT NULL ORDER BY w.ordering_key, w.seq
  ), window_heads AS (
    SELECT w.id, w.seq, w.next_attempt_at FROM window_firsts w
    WHERE w.seq = (
        SELECT p.seq FROM outbox_events p
        WHERE p.ordering_key = w.ordering_key AND p.status IN (${blocking})
        ORDER BY p.ordering_key, p.seq LIMIT 1)
      AND ${noneInFlight('w.ordering_key')}
  ), unkeyed AS (
    SELECT c.id, c.seq, c.next_attempt_at FROM outbox_events c
    WHERE c.status = 'PENDING' AND c.ordering_key IS NULL AND c.next_attempt_at <= now()
      ${lanes ? '' : `AND ${inWindow('c')}`}
    ORDER BY c.next_attempt_at, c.seq LIMIT $1
    FOR UPDATE SKIP LOCKED
  ), pool AS (
    SELECT id FROM window_heads
    UNION ALL SELECT id FROM unkeyed
    UNION ALL SELECT id FROM lane_heads
  ), candidates AS (
    SELECT e.id, e.next_attempt_at, e.seq, ${candidateBytes('e')} FROM outbox_events e
    WHERE e.id = ANY (ARRAY(SELECT id FROM pool)) AND e.status = ${NOT_A_CONSTANT_PENDING}
    ORDER BY e.next_attempt_at, e.seq LIMIT $1
    FOR UPDATE SKIP LOCKED
  )`;
}

/**
 * 'skip' only: a candidate overtaking FAILED events of its key is claimed only if every one of
 * them is still FAILED under a share lock held to commit. An operator retry of such an event
 * either waits for this claim (and then sees the successor in flight) or made it non-FAILED
 * first (and the successor is not claimed); so the two never end up in flight together.
 *
 * The FAILED events are looked up per candidate (by primary key, then its key's ordering-index
 * entries before it; OFFSET 0 keeps the planner from flattening the lateral into a join). As a
 * join, with statistics from before a keyed burst, the planner started from the FAILED event and
 * walked every later event of the table by seq to find the candidates among them.
 *
 * They are share-locked by primary key too (`id = ANY (ARRAY(...))`, 'FAILED' not a constant):
 * as `id IN (...) AND status = 'FAILED'`, with statistics that take FAILED events to be rare
 * (analyzed before they failed), the planner read the whole FAILED index and matched every
 * FAILED event of the table against the overtaken ones.
 */
export const SKIP_GUARD = `
  , preds AS (
    SELECT ce.id AS cid, f.id AS fid FROM outbox_events ce
    CROSS JOIN LATERAL (
      SELECT f.id FROM outbox_events f
      WHERE f.ordering_key = ce.ordering_key AND f.seq < ce.seq
        AND f.status IN (${BLOCKING.block}) AND f.status = ${NOT_A_CONSTANT_FAILED}
      OFFSET 0) f
    WHERE ce.id = ANY (ARRAY(SELECT id FROM candidates))
  ), held AS (
    SELECT f.id FROM outbox_events f
    WHERE f.id = ANY (ARRAY(SELECT fid FROM preds)) AND f.status = ${NOT_A_CONSTANT_FAILED}
    FOR SHARE
  ), ready AS (
    SELECT c.id FROM candidates c WHERE NOT EXISTS (
      SELECT 1 FROM preds p WHERE p.cid = c.id AND p.fid NOT IN (SELECT id FROM held))
  )`;

export const BLOCK_READY = `, ready AS (SELECT id FROM candidates)`;

/**
 * Claims the `ready` rows within the byte bound (withinBytes: `bytes` and `first` are its
 * parameters), so no claim statement can leave it out.
 */
export const claimed = (bytes: string, first: string): string => `${withinBytes(bytes, first)}
  , claimed AS (
    UPDATE outbox_events e
    SET status = 'PROCESSING', claim_token = $2::uuid, lease_expires_at = now() + ${msInterval('$3')},
        claimed_at = now(), claim_count = ${saturatingIncrement('e.claim_count')}, updated_at = now()
    WHERE e.id = ANY (ARRAY(SELECT id FROM within))
    RETURNING ${CLAIMED_COLUMNS}
  )`;

// Stamps skipped_at on FAILED events a claimed row overtook (all held by SKIP_GUARD).
export const SKIPPED = `
  , skipped AS (
    UPDATE outbox_events f SET skipped_at = now(), updated_at = now()
    FROM preds p
    WHERE f.id = p.fid AND f.skipped_at IS NULL AND p.cid IN (SELECT id::uuid FROM claimed)
    RETURNING f.id::text AS id
  )`;

/**
 * `root`: sent on a root executor, where the statement is its own transaction, which then commits
 * without waiting for its WAL flush (LEASE_COMMIT_COLUMN, leaseCommit.ts).
 */
function claimSql(policy: FailedHeadPolicy, lanes: boolean, root: boolean): string {
  const skip = policy === 'skip';
  // With the key scan, also how many candidates the due window and unkeyed rows gave on their
  // own: enough for a full claim means the next claim can start with the cheap statement again.
  const windowCount = lanes
    ? `(SELECT count(*) FROM (SELECT id FROM window_heads
        UNION SELECT u.id FROM unkeyed u WHERE ${inWindow('u')}) w)::int`
    : 'NULL::int';
  return `WITH RECURSIVE ${candidateSources(policy, lanes)}
  ${skip ? SKIP_GUARD : BLOCK_READY} ${claimed('$7', '$8')} ${skip ? SKIPPED : ''}
  SELECT ${LANE_STATE}, ${windowCount} AS window_count, ${BYTE_COLUMNS},
    ${skip ? '(SELECT array_agg(id) FROM skipped)' : 'NULL::text[]'} AS skipped_ids${root ? LEASE_COMMIT_COLUMN : ''},
    claimed.*
  FROM (SELECT 1) one
  ${LANE_LAST_JOIN}
  LEFT JOIN claimed ON true ORDER BY claimed.seq::bigint`;
}

type ClaimStatements = Record<FailedHeadPolicy, { fast: string; lanes: string }>;

/**
 * Per policy: the fast statement (due window and unkeyed rows only) and the one with the key scan;
 * on a root executor (CLAIM) and inside a caller's transaction (CLAIM_IN_TRANSACTION).
 */
const claimStatements = (root: boolean): ClaimStatements => ({
  block: { fast: claimSql('block', false, root), lanes: claimSql('block', true, root) },
  skip: { fast: claimSql('skip', false, root), lanes: claimSql('skip', true, root) },
});
const CLAIM = claimStatements(true);
const CLAIM_IN_TRANSACTION = claimStatements(false);

export interface ClaimResult {
  readonly rows: ClaimedRow[];
  /** FAILED heads recorded as skipped by this claim (policy 'skip'). */
  readonly skippedIds: string[];
  /** Where the next claim's round-robin key scan starts (null: from the first key). */
  readonly laneCursor?: string | null;
  /** Pass to the next claim: its due window alone is not expected to fill it (see claimBatch). */
  readonly keyScanFirst?: boolean;
  /**
   * maxBatchBytes left a claimable row out: the claim is full as one of `limit` rows is (the
   * relay claims again at once, pipelined), though it holds fewer.
   */
  readonly bytesFull?: boolean;
}

interface ClaimArgs {
  token: string;
  limit: number;
  /**
   * Payload bytes the claim takes at most (maxBatchBytes; withinBytes), beside `limit`: rows in
   * due order while their total stays within it, always at least one. Unset: no byte bound.
   */
  maxBytes?: number;
  leaseMs: number;
  failedHead: FailedHeadPolicy;
  laneCursor?: string | null;
  keyScanFirst?: boolean;
  /** Passed with each of the claim's statements (the relay tracks a claim it gives up on). */
  statement?: StatementOptions;
}

/** One claim statement; `lanes` adds the round-robin key scan from `laneCursor`. */
interface StepResult {
  readonly rows: ClaimedRow[];
  readonly skippedIds: string[];
  readonly laneCursor: string | null;
  /** The key scan went past the last key (and wrapped round to the first). */
  readonly wrapped: boolean;
  /** Candidates from the due window and unkeyed rows alone (key-scan statement only). */
  readonly windowCount: number | null;
  readonly bytes: ByteState;
}

/** `bytes`: the byte budget left; `first`: no row claimed yet (the first is taken whatever its size). */
async function claimStep(
  db: SqlExecutor,
  args: ClaimArgs,
  lanes: boolean,
  budget: { bytes: number; first: boolean },
): Promise<StepResult> {
  const statement = (db.inTransaction ? CLAIM_IN_TRANSACTION : CLAIM)[args.failedHead];
  const result = await db.query<
    Partial<ClaimedRow> & {
      lane_last: string | null;
      lane_more: boolean | null;
      lane_wrapped: boolean | null;
      window_count: number | null;
      skipped_ids: string[] | null;
      claimed_bytes: string | null;
      bytes_full: boolean | null;
    }
  >(
    lanes ? statement.lanes : statement.fast,
    [
      args.limit,
      args.token,
      args.leaseMs,
      args.limit * 2,
      args.limit * 2,
      args.laneCursor ?? null,
      budget.bytes,
      budget.first,
    ],
    args.statement,
  );
  const rows = result.filter((row): row is ClaimedRow & (typeof result)[number] => row.id != null);
  const skippedIds = [...new Set(result.flatMap((row) => row.skipped_ids ?? []))];
  const first = result[0];
  const more = lanes && first?.lane_more === true;
  return {
    rows,
    skippedIds,
    laneCursor: more ? first.lane_last : lanes ? null : (args.laneCursor ?? null),
    wrapped: first?.lane_wrapped === true,
    windowCount: first?.window_count == null ? null : Number(first.window_count),
    bytes: byteState(first),
  };
}

/**
 * Claims up to `limit` due PENDING rows under one token and lease, skipping rows other relays
 * hold. A keyed row is claimable only when it heads its key (no earlier PENDING or PROCESSING
 * row, nor FAILED under 'block') and no row of its key is in flight, so a key has at most one
 * row in flight and publishes in seq order. Under 'skip', FAILED events a claimed row overtook
 * are stamped skipped_at.
 *
 * Every statement's cost is bounded by `limit`, not by the backlog. The first one looks only at
 * the due window and unkeyed rows (no key scan, the cheap plan an unblocked backlog needs); while
 * the claim is not full, further statements under the same token scan keys round-robin from the
 * lane cursor (keyScan), each until it met as many keys with a claimable first event as rows are
 * missing, or visited twice that many keys, or came back round to where it started. The claim
 * stops once a scan came back round, or the scan passed the last key twice (so at most two
 * passes over the keys, usually one statement). Alone, a claim therefore takes
 * min(limit, claimable) rows. A key costs the scan one index probe (under 'skip' two when its
 * first event is FAILED), so a blocked key costs what any other key does, however many rows it
 * holds.
 *
 * `maxBytes` bounds the claim's payload bytes over all its statements (withinBytes): a statement
 * whose bound left a claimable row out ends the claim, and the claim's first row is taken
 * whatever its size.
 *
 * When the cheap statement came back short (behind a blocked key it finds nothing on every
 * claim: its due window holds only the blocked rows) the key scan ran anyway, so the result says
 * `keyScanFirst` and the next claim starts with the key-scan statement, one statement fewer. That
 * statement also reads the due window and unkeyed rows and reports how many candidates they gave
 * on their own; when those would fill the claim, the next claim starts cheap again.
 */
export async function claimBatch(db: SqlExecutor, args: ClaimArgs): Promise<ClaimResult> {
  const rows: ClaimedRow[] = [];
  const skipped = new Set<string>();
  let cursor = args.laneCursor ?? null;
  // Times the scan went past the last key (from no cursor it starts as good as past it).
  let ends = cursor === null ? 1 : 0;
  let round = false; // a scan came back round to where it started
  let keyScanFirst = false;
  let bytes = args.maxBytes ?? Number.MAX_SAFE_INTEGER; // the byte budget left
  let bytesFull = false; // the byte bound left a claimable row out
  for (
    let statement = 0;
    rows.length < args.limit && !bytesFull && (statement === 0 || (!round && ends < 2));
    statement += 1
  ) {
    const lanes = statement > 0 || args.keyScanFirst === true;
    const step = await claimStep(
      db,
      { ...args, limit: args.limit - rows.length, laneCursor: cursor },
      lanes,
      {
        bytes,
        first: rows.length === 0,
      },
    );
    rows.push(...step.rows);
    for (const id of step.skippedIds) skipped.add(id);
    bytes = Math.max(0, bytes - step.bytes.claimedBytes);
    bytesFull = step.bytes.bytesFull;
    // Would the cheap statement alone have come back short (not full by bytes)? Then the next
    // claim starts with the scan.
    if (statement === 0)
      keyScanFirst = !bytesFull && (lanes ? (step.windowCount ?? 0) : step.rows.length) < args.limit;
    if (!lanes) continue;
    cursor = step.laneCursor;
    round = cursor === null;
    if (step.wrapped) ends += 1;
  }
  rows.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
  return { rows, skippedIds: [...skipped], laneCursor: cursor, keyScanFirst, bytesFull };
}
