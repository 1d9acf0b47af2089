/**
 * The real side of the inbox model: several workers' SQL transitions (sqlWorkerOps, each on its
 * own Prisma client) on one PostgreSQL database, handler transactions the test holds open, and
 * the invariants read back from the tables after every command.
 */
import { fromPrisma, type Inbox, type InboxAdmin, type SqlExecutor } from '@ferry/core';
import type { ClaimedReceipt } from '@ferry/core';
import type { ResolvedInboxWorkerOptions } from '../../../src/inbox/options';
import type { InboxWorkerOps } from '../../../src/inbox/workerOps';
import type { InboxModel, Status } from './model';

export type Tx = Parameters<typeof fromPrisma>[0];

/** A handler transaction held open after its business write, until finish() decides. */
export interface OpenTx {
  finish(decision: 'complete' | 'throw'): Promise<'committed' | 'rolled back'>;
}

export interface InboxReal {
  readonly db: SqlExecutor;
  readonly inbox: Inbox;
  readonly admin: InboxAdmin;
  readonly ops: readonly InboxWorkerOps<Tx>[];
  readonly worker: ResolvedInboxWorkerOptions;
  /** The claimed receipts as the workers received them, by claim token. */
  readonly claims: Map<string, ClaimedReceipt>;
  /** Open handler transactions by claim token. */
  readonly open: Map<string, OpenTx>;
}

export class InvariantViolation extends Error {}

export function fail(message: string): never {
  throw new InvariantViolation(message);
}

export const EFFECTS_TABLE = `CREATE TABLE IF NOT EXISTS model_effects (id bigserial PRIMARY KEY, receipt_id uuid NOT NULL)`;

/** A handler transaction on a claim whose lease is gone must fail before its work runs. */
export async function expectBeginRefused(ops: InboxWorkerOps<Tx>, receipt: ClaimedReceipt): Promise<void> {
  let ran = false;
  const outcome = await ops
    .transaction(receipt, async () => {
      ran = true;
    })
    .then(
      () => 'committed',
      (error: unknown) => String((error as { code?: unknown }).code ?? error),
    );
  if (ran) fail('a handler ran on a claim whose lease had expired');
  if (outcome !== 'FERRY_LEASE_LOST') fail(`a handler transaction on a lost lease ended with ${outcome}`);
}

/**
 * Opens the handler transaction for `receipt` through the worker's own `transaction` and
 * `complete` transitions: it writes one business row, then waits for finish().
 */
export async function openHandlerTx(ops: InboxWorkerOps<Tx>, receipt: ClaimedReceipt): Promise<OpenTx> {
  let decide!: (d: 'complete' | 'throw') => void;
  const decision = new Promise<'complete' | 'throw'>((resolve) => (decide = resolve));
  let written!: () => void;
  const wrote = new Promise<void>((resolve) => (written = resolve));
  let cause: unknown;
  const done = ops
    .transaction(receipt, async (tx) => {
      await fromPrisma(tx).execute(`INSERT INTO model_effects (receipt_id) VALUES ($1::uuid)`, [receipt.id]);
      written();
      if ((await decision) === 'throw') throw new Error('handler failed');
      if ((await ops.complete(tx, receipt)) !== 'completed')
        throw new Error('lease lost: completion fenced out');
    })
    .then(
      () => 'committed' as const,
      (error: unknown) => {
        cause = error;
        return 'rolled back' as const;
      },
    );
  const early = await Promise.race([wrote.then(() => null), done]);
  if (early !== null) fail(`the handler transaction ended before its business write: ${String(cause)}`);
  return {
    finish(d) {
      decide(d);
      return done;
    },
  };
}

interface DbRow {
  id: string;
  status: Status;
  attempts: number;
  claim_token: string | null;
  lease_live: boolean | null;
  due: boolean;
  effects: number;
}

const SNAPSHOT = `
  SELECT r.id::text AS id, r.status, r.attempts::int AS attempts, r.claim_token::text AS claim_token,
    r.lease_expires_at > now() AS lease_live, r.next_attempt_at <= now() AS due,
    (SELECT count(*)::int FROM model_effects e WHERE e.receipt_id = r.id) AS effects
  FROM ferry_inbox_receipts r`;

function compare(m: InboxModel, row: DbRow): void {
  const want = m.receipts.get(row.id);
  if (!want) return fail(`receipt ${row.id} exists but was never accepted`);
  const where = `receipt ${row.id.slice(0, 8)}`;
  if (row.status !== want.status) fail(`${where}: status ${row.status}, model says ${want.status}`);
  if (row.attempts !== want.attempts) fail(`${where}: attempts ${row.attempts}, model says ${want.attempts}`);
  if (row.effects !== want.effects)
    fail(`${where}: ${row.effects} committed business effects, model says ${want.effects}`);
  if (row.effects > 1) fail(`${where}: applied twice`);
  if ((row.status === 'COMPLETED') !== (row.effects === 1))
    fail(`${where}: ${row.status} with ${row.effects} business effects`);
  if (row.status === 'PROCESSING') {
    if (row.claim_token !== want.token) fail(`${where}: held under another token than the model's`);
    if (row.lease_live !== want.leaseLive)
      fail(`${where}: lease ${row.lease_live ? 'alive' : 'expired'}, model says the opposite`);
  } else if (row.lease_live !== null) fail(`${where}: ${row.status} but still has a lease`);
  if ((row.status === 'PENDING' || row.status === 'RETRYABLE') && row.due !== want.due)
    fail(`${where}: ${row.status} ${row.due ? 'due' : 'not due'}, model says the opposite`);
}

/** Reads every receipt and its committed effects; throws InvariantViolation on a mismatch. */
export async function checkInvariants(m: InboxModel, real: InboxReal): Promise<void> {
  const rows = await real.db.query<DbRow>(SNAPSHOT);
  if (rows.length !== m.receipts.size) fail(`${rows.length} receipts stored, ${m.receipts.size} accepted`);
  for (const row of rows) compare(m, row);
}

/** The controllable clock: the lease of `token` ends at this instant (clock_timestamp()). */
export function expireToken(db: SqlExecutor, token: string): Promise<number> {
  return db.execute(
    `UPDATE ferry_inbox_receipts SET lease_expires_at = clock_timestamp()
     WHERE status = 'PROCESSING' AND claim_token = $1::uuid`,
    [token],
  );
}

export function advanceRetries(db: SqlExecutor): Promise<number> {
  return db.execute(
    `UPDATE ferry_inbox_receipts SET next_attempt_at = clock_timestamp() - interval '1 millisecond'
     WHERE status IN ('PENDING', 'RETRYABLE') AND next_attempt_at > now()`,
  );
}

export async function scheduledGap(db: SqlExecutor, id: string): Promise<number> {
  const [row] = await db.query<{ gap: string }>(
    `SELECT round(extract(epoch FROM next_attempt_at - updated_at) * 1000)::bigint::text AS gap
     FROM ferry_inbox_receipts WHERE id = $1::uuid`,
    [id],
  );
  return Number(row?.gap);
}
