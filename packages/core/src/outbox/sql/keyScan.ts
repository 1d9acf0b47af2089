import type { FailedHeadPolicy } from '../options';

/**
 * Statuses of an earlier event that hold back a keyed event, per failed-head policy. Inlined
 * as literals (trusted constants), so the planner can match the partial ordering index.
 */
export const BLOCKING: Record<FailedHeadPolicy, string> = {
  block: `'PENDING', 'PROCESSING', 'FAILED'`,
  skip: `'PENDING', 'PROCESSING'`,
};

/**
 * No event of key `k` is in flight (a retried skipped head must wait for its successor): one
 * probe of the in-flight index per key, so it costs the same however many rows other claims hold.
 *
 * Asked as a scalar subquery (never turned into a join), for the first in-flight entry from `k`
 * to `k` in key order: of the indexes whose predicates it proves only the in-flight index gives
 * that order with nothing left to filter. As NOT EXISTS an in-flight row of key `k`, with
 * statistics that take PROCESSING events to be rare (analyzed before a burst was claimed), the
 * planner either read the whole in-flight index per key as an anti-join, or, with
 * `p.ordering_key = k` (which leaves no order to give), found reading the whole lease index
 * (PROCESSING too) exactly as cheap and did that per key.
 */
export const noneInFlight = (k: string) =>
  `((SELECT true FROM outbox_events p
    WHERE p.status = 'PROCESSING' AND p.ordering_key >= ${k} AND p.ordering_key <= ${k}
    ORDER BY p.ordering_key LIMIT 1) IS NULL)`;

/**
 * The first unfinished event (first ordering-index entry) of the first key meeting `where`, a
 * comparison on o.ordering_key (which implies the index's IS NOT NULL, so it is not spelled out).
 * Spelled out, with statistics from before any keyed event (ordering_key all NULL) it made the
 * planner expect no row at all, so LIMIT 1 saved nothing on the index scan and a sequential scan
 * and sort looked cheaper: every step of the key scan read the whole table. Without it the
 * comparison alone (a parameter: a default fraction of the rows) sets the estimate, and reading
 * the index in order up to the first row is the cheap plan.
 */
const firstOfKey = (where: string, wrapped: string) => `
    (SELECT o.ordering_key AS k, o.id, o.seq, o.status, o.next_attempt_at, ${wrapped} AS wrapped
      FROM outbox_events o
      WHERE o.status IN ('PENDING', 'PROCESSING', 'FAILED') AND ${where}
      ORDER BY o.ordering_key, o.seq LIMIT 1)`;

/**
 * The key after `after`. Past the last key the scan wraps once to the first key and then goes
 * up to the cursor $6 it started from (included: its head may have moved since).
 */
const nextKey = (after: string, wrapped: string) => `
    SELECT x.* FROM (${firstOfKey(`o.ordering_key > ${after} AND (NOT ${wrapped} OR o.ordering_key <= $6::text)`, wrapped)}
      UNION ALL${firstOfKey(`NOT ${wrapped} AND o.ordering_key <= $6::text`, 'true')}
    ) x LIMIT 1`;

/**
 * Counts toward the scan's stop: a key whose first unfinished event is PENDING and due (the
 * head, as far as the scan can tell). Under 'skip' a FAILED first event may still have a head
 * behind it, claimed but not counted, so the scan goes on a little further than it needs to.
 */
const counted = (e: string) =>
  `(CASE WHEN ${e}.status = 'PENDING' AND ${e}.next_attempt_at <= now() THEN 1 ELSE 0 END)`;

/**
 * The heads the scan found. Under 'block' a key's first index entry is its head (the index
 * holds exactly the blocking statuses), so the scan's own probe is all it takes; under 'skip'
 * a FAILED first entry costs one more probe for the first PENDING or PROCESSING event.
 */
const LANE_HEADS: Record<FailedHeadPolicy, string> = {
  block: `
    SELECT l.id, l.seq, l.next_attempt_at FROM lanes l
    WHERE l.status = 'PENDING' AND l.next_attempt_at <= now() AND ${noneInFlight('l.k')}`,
  skip: `
    SELECT h.id, h.seq, h.next_attempt_at FROM lanes l CROSS JOIN LATERAL (
      SELECT l.id, l.seq, l.status, l.next_attempt_at WHERE l.status <> 'FAILED'
      UNION ALL
      (SELECT o.id, o.seq, o.status, o.next_attempt_at FROM outbox_events o
        WHERE l.status = 'FAILED' AND o.ordering_key IS NOT NULL AND o.ordering_key = l.k
          AND o.status IN (${BLOCKING.skip})
        ORDER BY o.seq LIMIT 1)) h
    WHERE h.status = 'PENDING' AND h.next_attempt_at <= now() AND ${noneInFlight('l.k')}`,
};

/**
 * CTEs `lanes` (the keys visited: k, the key's first unfinished event, wrapped, n, found) and
 * `lane_heads` (the claimable heads among them). A loose index scan over the ordering index,
 * one probe per key, round-robin from the key after the cursor $6 (from the first key when
 * null), wrapping once past the last key back to the cursor. It stops once it met $1 keys that
 * count (see `counted`), or after $5 keys, or when it came back to where it started. Its cost
 * is bounded by $5 probes whatever the keys hold. Without `lanes`: no scan ($5, $6 typed only,
 * so the statement still prepares).
 */
export function keyScan(policy: FailedHeadPolicy, lanes: boolean): string {
  const scan = lanes
    ? `(SELECT first.*, 1 AS n, ${counted('first')} AS found
      FROM (${nextKey(`coalesce($6::text, '')`, 'false')}) first)
    UNION ALL
    (SELECT nx.*, l.n + 1, l.found + ${counted('nx')} FROM lanes l
      CROSS JOIN LATERAL (${nextKey('l.k', 'l.wrapped')}) nx
      WHERE l.n < $5 AND l.found < $1)`
    : `SELECT $6::text AS k, NULL::uuid AS id, NULL::bigint AS seq, NULL::text AS status,
        NULL::timestamptz AS next_attempt_at, false AS wrapped, $5::int AS n, 0 AS found WHERE false`;
  return `
  lanes AS (
    ${scan}
  ), lane_heads AS (${LANE_HEADS[policy]}
  )`;
}

/**
 * Output columns describing where the scan stopped: `lane_last` (its last key), `lane_more`
 * (it stopped at a bound, not back where it started or at the end of the keys) and
 * `lane_wrapped` (it went past the last key). Needs `FROM ... LEFT JOIN lane_last_row last`.
 */
export const LANE_STATE = `last.k AS lane_last, coalesce(last.n >= $5 OR last.found >= $1, false) AS lane_more,
    coalesce(last.wrapped, false) AS lane_wrapped`;

/** The join that LANE_STATE reads. */
export const LANE_LAST_JOIN = `LEFT JOIN (SELECT k, n, found, wrapped FROM lanes ORDER BY n DESC LIMIT 1) last ON true`;
