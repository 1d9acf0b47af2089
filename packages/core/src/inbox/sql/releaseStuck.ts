import type { SqlExecutor } from '../../sql/executor';
import { opaqueStatus } from '../../outbox/sql/fragments';
import { receiptLock, TABLE } from './fragments';

/**
 * Operator release: PROCESSING receipts of scope $1 whose lease expired (or, with force, every
 * receipt of the claim token $2, for a worker known to be dead) go back to PENDING, due now, and
 * the attempt their claim consumed is given back (a dead worker is not a failed attempt;
 * lifetime_attempts keeps the history). Fenced: the UPDATE re-checks status and token, and
 * bumping row_version makes a worker that still holds a forced claim fail its completion.
 *
 * The candidates are chosen once (LIMIT $3 before any lock is tried: locks are taken for at most
 * $3 rows) and updated by primary key (`= ANY (ARRAY(...))`, an InitPlan), the re-checked status
 * opaque (opaqueStatus) so the lease index is no way in. As `id IN (...)`, with statistics from
 * before the rows were claimed, the planner read every row in flight off the lease index and ran
 * the sub-select again for each (a semi-join): 330,000 rows of work beside 7,000 rows in flight,
 * and more than the limit released, the rows it had just updated being skipped by the
 * sub-select's next run (test/inbox/maintenanceCost.test.ts). The forced release by claim token
 * still reads the scope's PROCESSING rows: no index holds claim tokens.
 */
const UPDATE = (ids: string): string => `
    UPDATE ${TABLE} r
    SET status = 'PENDING', attempts = greatest(r.attempts - 1, 0), next_attempt_at = now(),
        claim_token = NULL, lease_expires_at = NULL, row_version = r.row_version + 1, updated_at = now()
    WHERE r.id = ANY (ARRAY(${ids}))
      AND r.status = ${opaqueStatus('PROCESSING')} AND ($2::uuid IS NULL OR r.claim_token = $2::uuid)
    RETURNING r.id`;

/**
 * Expired leases ($1 scope, $2 claim token or null, $3 limit): released without the advisory
 * lock, as a worker's claim reclaims them; a row another transaction has locked is skipped.
 */
const EXPIRED_SQL = `
  WITH candidate AS (
    SELECT id FROM ${TABLE}
    WHERE scope = $1 AND status = 'PROCESSING'
      AND ($2::uuid IS NULL OR claim_token = $2::uuid) AND lease_expires_at <= now()
    ORDER BY lease_expires_at, id LIMIT $3
    FOR UPDATE SKIP LOCKED
  ), released AS (${UPDATE('SELECT id FROM candidate')})
  SELECT id::text AS id, true AS released FROM released`;

/**
 * The receipts' advisory locks (receiptLock) another session of this database holds in `mode`
 * ('ShareLock': a live handler transaction; 'ExclusiveLock': another forced release), as keys
 * (pg_locks keeps a bigint key as classid, the high 32 bits, and objid, the low ones). Read when
 * the statement reads it: a lock released since is not there.
 */
const HELD = (mode: 'ShareLock' | 'ExclusiveLock'): string => `
    SELECT (l.classid::bigint << 32) | l.objid::bigint FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND l.pid <> pg_backend_pid()
      AND l.mode = '${mode}'
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * The forced release of claim token $2 ($1 scope, $3 limit; the admin requires the token) never
 * takes a receipt whose handler transaction is alive (admin operations never cancel a running
 * handler): it takes a row only if it gets the receipt's advisory lock exclusively, which a
 * handler transaction holds shared from its first statement to its end (receiptLock,
 * beginHandler), and then the row's lock without waiting. Every candidate is answered: released,
 * or `running` when the advisory lock is held or the row is locked by another transaction (a
 * handler whose completion ran but has not committed holds both; the lock is tried first, so the
 * row lock never hides it; a row changed and committed by another transaction as the release
 * reads it is answered `running` too, and is gone from the next release). A receipt whose lock
 * another forced release holds (exclusively: two operators, or a retried call, releasing one dead
 * worker's claim at once) is no candidate: that release is taking it and answers it, and this one
 * answers it under neither list, as it would once that one committed, and it spends no slot of
 * this release's bound (pg_locks is read before the LIMIT; a CLI drain stops at a short pass).
 * Before review 151 it was `running`, a live handler's answer, for a claim nobody ran. One taken by
 * that other release only after this statement read pg_locks is still answered `running`. The
 * lock is held to this transaction's end, so a handler transaction starting meanwhile reads its
 * claim as lost. A claim queued in the worker but not started holds no lock: it is released.
 */
const FORCED_SQL = `
  WITH candidate AS (
    SELECT id FROM ${TABLE}
    WHERE scope = $1 AND status = 'PROCESSING' AND ($2::uuid IS NULL OR claim_token = $2::uuid)
      AND ${receiptLock('id')} NOT IN (${HELD('ExclusiveLock')})
    ORDER BY lease_expires_at, id LIMIT $3
  ), checked AS MATERIALIZED (
    SELECT id, pg_try_advisory_xact_lock(${receiptLock('id')}) AS idle FROM candidate
  ), locked AS MATERIALIZED (
    SELECT id FROM ${TABLE}
    WHERE id = ANY (ARRAY(SELECT id FROM checked WHERE idle))
      AND status = ${opaqueStatus('PROCESSING')} AND ($2::uuid IS NULL OR claim_token = $2::uuid)
    FOR UPDATE SKIP LOCKED
  ), released AS (${UPDATE('SELECT id FROM locked')})
  SELECT id::text AS id, true AS released FROM released
  UNION ALL
  SELECT id::text AS id, false AS released FROM checked
  WHERE NOT idle OR id <> ALL (ARRAY(SELECT id FROM locked))`;

/**
 * A dry run's answer, read without taking a lock (a dry run must not disturb a live handler: the
 * forced release's exclusive advisory lock, even rolled back with the dry run's savepoint, makes a
 * handler transaction starting meanwhile read its claim as lost, and a row lock makes its
 * completion wait). The candidates are those the release takes; with force ($4), a receipt whose
 * advisory lock (receiptLock) another session of this database holds shared (a live handler) is
 * `running`, and one it holds exclusively (another forced release taking it) is answered under
 * neither, as the release answers them (FORCED_SQL). A row locked without that lock (by a lease
 * renewal for one) cannot be seen without locking it: the dry run counts it released.
 */
const PREVIEW_SQL = `
  WITH shared AS MATERIALIZED (${HELD('ShareLock')}
  ), exclusive AS MATERIALIZED (${HELD('ExclusiveLock')}
  )
  SELECT id::text AS id, NOT ($4::boolean AND ${receiptLock('id')} IN (SELECT * FROM shared)) AS released
  FROM ${TABLE}
  WHERE scope = $1 AND status = 'PROCESSING'
    AND ($2::uuid IS NULL OR claim_token = $2::uuid) AND ($4::boolean OR lease_expires_at <= now())
    AND NOT ($4::boolean AND ${receiptLock('id')} IN (SELECT * FROM exclusive))
  ORDER BY lease_expires_at, id LIMIT $3`;

export interface ReleasedReceipts {
  /** Ids handed back to PENDING. */
  readonly released: readonly string[];
  /** Ids of the claim whose handler transaction is alive: a forced release leaves them untouched. */
  readonly running: readonly string[];
}

export interface ReleaseArgs {
  readonly scope: string;
  /** Only this claim's receipts (null: every claim of the scope). */
  readonly claimToken: string | null;
  readonly force: boolean;
  readonly limit: number;
  /** Answer without taking a lock or changing a row. */
  readonly dryRun?: boolean;
}

/**
 * Releases (see EXPIRED_SQL, FORCED_SQL) or, with `dryRun`, answers what a release would do
 * without taking a lock (PREVIEW_SQL). `released` and `running` together hold at most `limit`
 * ids, every candidate of a forced release being one or the other but those another forced
 * release is taking at the same moment (answered by that one).
 */
export async function releaseStuckReceipts(db: SqlExecutor, args: ReleaseArgs): Promise<ReleasedReceipts> {
  const rows = await db.query<{ id: string; released: boolean }>(...releaseStatement(args));
  return {
    released: rows.filter((r) => r.released).map((r) => r.id),
    running: rows.filter((r) => !r.released).map((r) => r.id),
  };
}

function releaseStatement(args: ReleaseArgs): [string, unknown[]] {
  const { scope, claimToken, force, limit } = args;
  if (args.dryRun === true) return [PREVIEW_SQL, [scope, claimToken, limit, force]];
  return [force ? FORCED_SQL : EXPIRED_SQL, [scope, claimToken, limit]];
}
