/**
 * The real side of the outbox model: several relay stores on one PostgreSQL database, the
 * admin API, and the invariants read back from the table after every command.
 */
import type { Emitter, OperatorOutboxAdmin, ResolvedOutboxOptions, SqlExecutor } from '@ferry/core';
import type { RelayStore } from '@ferry/core/internal/testing';
import type { OutboxModel, Status } from './model';

export interface OutboxReal {
  /** The checker's own connection (also used for emit and the controllable clock). */
  readonly db: SqlExecutor;
  /** One store per relay, each on its own Prisma client (its own pool). */
  readonly stores: readonly RelayStore[];
  /** Per relay: where its next claim's round-robin key scan starts, as the relay keeps it. */
  readonly laneCursors: Array<string | null>;
  readonly keyScanFirst: boolean[];
  readonly admin: OperatorOutboxAdmin;
  readonly emitter: Emitter;
  readonly options: ResolvedOutboxOptions;
}

interface DbRow {
  id: string;
  seq: string;
  ordering_key: string | null;
  status: Status;
  retry_count: number;
  claim_token: string | null;
  lease_live: boolean | null;
  due: boolean;
}

const SNAPSHOT = `
  SELECT id::text AS id, seq::text AS seq, ordering_key, status, retry_count::int AS retry_count,
    claim_token::text AS claim_token, lease_expires_at > now() AS lease_live, next_attempt_at <= now() AS due
  FROM outbox_events ORDER BY seq`;

export class InvariantViolation extends Error {}

/** One relay's claim, passing and keeping its lane cursor as the relay loop does. */
export async function claimAs(
  real: OutboxReal,
  relay: number,
  args: { token: string; limit: number; failedHead: OutboxModel['failedHead'] },
): Promise<string[]> {
  const store = real.stores[relay] as RelayStore;
  const claim = await store.claim({
    ...args,
    leaseMs: real.options.lease.duration,
    laneCursor: real.laneCursors[relay] ?? null,
    keyScanFirst: real.keyScanFirst[relay] ?? false,
  });
  real.laneCursors[relay] = claim.laneCursor ?? null;
  real.keyScanFirst[relay] = claim.keyScanFirst ?? false;
  return claim.rows.map((r) => r.id);
}

export function fail(message: string): never {
  throw new InvariantViolation(message);
}

/** The spec's exponential / fixed formula, written independently of the relay's backoff module. */
export function specDelayMs(retry: ResolvedOutboxOptions['retry'], retryCount: number): number {
  const raw = retry.backoff === 'fixed' ? retry.initialDelay : retry.initialDelay * 2 ** (retryCount - 1);
  return Math.min(retry.maxDelay, raw);
}

function compareRow(m: OutboxModel, row: DbRow): void {
  const expected = m.rows.get(row.id);
  if (!expected) return fail(`row ${row.id} exists in the table but was never emitted`);
  const where = `row seq ${row.seq} (key ${row.ordering_key ?? '-'})`;
  if (row.status !== expected.status) fail(`${where}: status ${row.status}, model says ${expected.status}`);
  if (row.retry_count !== expected.retryCount)
    fail(`${where}: retry_count ${row.retry_count}, model says ${expected.retryCount}`);
  if (row.status === 'PROCESSING') {
    if (row.claim_token !== expected.token) fail(`${where}: held under another claim token than the model's`);
    if (row.lease_live !== expected.leaseLive)
      fail(`${where}: lease ${row.lease_live ? 'alive' : 'expired'}, model says the opposite`);
  } else if (row.claim_token !== null || row.lease_live !== null) {
    fail(`${where}: ${row.status} but still carries a claim token or lease`);
  }
  if (row.status === 'PENDING' && row.due !== expected.due)
    fail(`${where}: PENDING ${row.due ? 'due' : 'not due'}, model says the opposite`);
  if (row.status === 'SENT' && expected.published === 0) fail(`${where}: SENT but never published`);
}

/**
 * Per ordering key: at most one row in flight, and none in flight past an earlier unfinished row
 * (except a skipped head an operator retried).
 */
function checkOrdering(m: OutboxModel, rows: readonly DbRow[]): void {
  const inFlight = new Map<string, DbRow>();
  const blocking: readonly Status[] = ['PENDING', 'PROCESSING'];
  for (const row of rows) {
    if (row.ordering_key === null || row.status !== 'PROCESSING') continue;
    const other = inFlight.get(row.ordering_key);
    if (other)
      fail(`key ${row.ordering_key}: two rows in flight at once (seq ${other.seq} and seq ${row.seq})`);
    inFlight.set(row.ordering_key, row);
    // A skipped head ('skip' policy) that an operator retried is published after its successors.
    const earlier = rows.find(
      (p) =>
        p.ordering_key === row.ordering_key &&
        BigInt(p.seq) < BigInt(row.seq) &&
        blocking.includes(p.status) &&
        m.rows.get(p.id)?.overtaken !== true,
    );
    if (earlier)
      fail(
        `key ${row.ordering_key}: seq ${row.seq} in flight while earlier seq ${earlier.seq} is ${earlier.status}`,
      );
  }
}

/** Reads the whole table and checks it against the model; throws InvariantViolation. */
export async function checkInvariants(m: OutboxModel, real: OutboxReal): Promise<void> {
  const rows = await real.db.query<DbRow>(SNAPSHOT);
  if (rows.length !== m.rows.size)
    fail(`${rows.length} rows in the table, ${m.rows.size} emitted: lost rows`);
  for (const row of rows) compareRow(m, row);
  checkOrdering(m, rows);
}

/** The controllable clock: ends the leases held under `token` now (database clock). */
export function expireToken(db: SqlExecutor, token: string): Promise<number> {
  return db.execute(
    `UPDATE outbox_events SET lease_expires_at = clock_timestamp() - interval '1 millisecond'
     WHERE status = 'PROCESSING' AND claim_token = $1::uuid`,
    [token],
  );
}

/** The controllable clock: every scheduled retry becomes due now. */
export function advanceRetries(db: SqlExecutor): Promise<number> {
  return db.execute(
    `UPDATE outbox_events SET next_attempt_at = clock_timestamp() - interval '1 millisecond'
     WHERE status = 'PENDING' AND next_attempt_at > now()`,
  );
}

/** next_attempt_at - updated_at in ms for the given rows (both written by one statement). */
export async function scheduledGaps(db: SqlExecutor, ids: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.query<{ id: string; gap: string }>(
    `SELECT id::text AS id, round(extract(epoch FROM next_attempt_at - updated_at) * 1000)::bigint::text AS gap
     FROM outbox_events WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, Number(r.gap)]));
}

export async function seqOf(db: SqlExecutor, ids: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.query<{ id: string; seq: string }>(
    `SELECT id::text AS id, seq::text AS seq FROM outbox_events WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, Number(r.seq)]));
}
