/**
 * The outbox model: what each row's state must be after every transition, kept beside the
 * real table and compared with it after every command. Pure; no database.
 */
import type { FailedHeadPolicy } from '@ferry/core';

export type Status = 'PENDING' | 'PROCESSING' | 'SENT' | 'FAILED';

export interface RowModel {
  readonly id: string;
  readonly seq: number;
  readonly key: string | null;
  readonly maxRetries: number;
  status: Status;
  retryCount: number;
  /** The claim token the row is held under (PROCESSING only). */
  token: string | null;
  /** False once an `expire` command ended the lease (PROCESSING only). */
  leaseLive: boolean;
  /** PENDING rows: next_attempt_at is not in the future. */
  due: boolean;
  /**
   * Claims of this row in a row that ended by lease expiry, with no fenced completion or
   * operator retry in between (read by the poison guard).
   */
  expiries: number;
  /** How often a relay handed the row to the broker. */
  published: number;
  /**
   * A later row of its key was claimed while this one was FAILED ('skip' policy): the row was
   * skipped, and if an operator retries it, it is published after its successors.
   */
  overtaken: boolean;
}

export interface HeldBatch {
  readonly token: string;
  readonly ids: readonly string[];
  published: boolean;
}

export interface OutboxModel {
  readonly failedHead: FailedHeadPolicy;
  readonly rows: Map<string, RowModel>;
  /** Per relay: the batch it believes it holds, or null. */
  readonly held: Array<HeldBatch | null>;
  nextSeq: number;
}

/** Statuses of an earlier row of the same key that keep a row from being claimed. */
export function blockingStatuses(policy: FailedHeadPolicy): readonly Status[] {
  return policy === 'block' ? ['PENDING', 'PROCESSING', 'FAILED'] : ['PENDING', 'PROCESSING'];
}

/** Ids a claim may take now: due PENDING rows not blocked by an earlier row of their key. */
export function claimable(m: Readonly<OutboxModel>): Set<string> {
  const blocking = blockingStatuses(m.failedHead);
  const result = new Set<string>();
  for (const row of m.rows.values()) {
    if (row.status !== 'PENDING' || !row.due) continue;
    // Keyed: no earlier row of the key in a blocking status, and no row of the key in flight
    // (a retried skipped head waits for its successor).
    const blocked =
      row.key !== null &&
      [...m.rows.values()].some(
        (p) =>
          p.key === row.key &&
          ((p.seq < row.seq && blocking.includes(p.status)) || p.status === 'PROCESSING'),
      );
    if (!blocked) result.add(row.id);
  }
  return result;
}

/** Rows held under `token` whose lease the model considers alive. */
export function liveUnder(m: Readonly<OutboxModel>, token: string): RowModel[] {
  return [...m.rows.values()].filter((r) => r.status === 'PROCESSING' && r.token === token && r.leaseLive);
}

export function applyClaim(m: OutboxModel, token: string, ids: readonly string[]): void {
  for (const id of ids) {
    const row = m.rows.get(id) as RowModel;
    Object.assign(row, { status: 'PROCESSING', token, leaseLive: true, due: false });
    markOvertaken(m, row);
  }
}

/** Earlier FAILED rows of `row`'s key are overtaken ('skip') once `row` is claimed. */
export function markOvertaken(m: OutboxModel, row: RowModel): void {
  for (const p of m.rows.values())
    if (row.key !== null && p.key === row.key && p.seq < row.seq && p.status === 'FAILED') p.overtaken = true;
}

/** Back to PENDING without a claim (release, lease recovery) or to FAILED. */
export function unclaim(row: RowModel, status: 'PENDING' | 'FAILED'): void {
  Object.assign(row, { status, token: null, leaseLive: false, due: status === 'PENDING' });
}

/** Rows a heal phase may leave unsent: FAILED, or PENDING behind a FAILED head under 'block'. */
export function legitimatelyUnsent(m: Readonly<OutboxModel>, row: RowModel): boolean {
  if (row.status === 'FAILED') return true;
  if (row.status !== 'PENDING' || row.key === null || m.failedHead !== 'block') return false;
  return [...m.rows.values()].some((p) => p.key === row.key && p.seq < row.seq && p.status === 'FAILED');
}
