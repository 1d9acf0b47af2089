/** Operator commands of the outbox model: admin retry (FAILED → PENDING) and markFailed (PENDING → FAILED). */
import type { AsyncCommand } from 'fast-check';
import { claimable, markOvertaken, type OutboxModel, type RowModel } from './model';
import { applyClaims, raceClaims } from './commands';
import { checkInvariants, fail, type OutboxReal } from './system';

type Cmd = AsyncCommand<OutboxModel, OutboxReal>;

/** `pick` chooses among rows in `status` when there are some (the interesting case), else among all. */
function pickRow(m: Readonly<OutboxModel>, pick: number, status: RowModel['status']): RowModel | undefined {
  const all = [...m.rows.values()].sort((a, b) => a.seq - b.seq);
  const preferred = all.filter((r) => r.status === status);
  const rows = pick % 3 === 0 || preferred.length === 0 ? all : preferred;
  return rows[pick % Math.max(1, rows.length)];
}

export function adminRetryCommand(pick: number): Cmd {
  return {
    check: (m) => m.rows.size > 0,
    async run(m, real) {
      const row = pickRow(m, pick, 'FAILED') as RowModel;
      const { outcome } = await real.admin.retry(row.id);
      const expected = row.status === 'FAILED' ? 'applied' : 'conflict';
      if (outcome !== expected)
        fail(`admin retry of a ${row.status} row: ${outcome}, model expects ${expected}`);
      if (outcome === 'applied')
        Object.assign(row, { status: 'PENDING', retryCount: 0, due: true, expiries: 0 });
      await checkInvariants(m, real);
    },
    toString: () => `adminRetry(row #${pick})`,
  };
}

export function adminMarkFailedCommand(pick: number): Cmd {
  return {
    check: (m) => m.rows.size > 0,
    async run(m, real) {
      const row = pickRow(m, pick, 'PENDING') as RowModel;
      const { outcome } = await real.admin.markFailed(row.id, 'operator gave up');
      const expected = row.status === 'PENDING' ? 'applied' : 'conflict';
      if (outcome !== expected)
        fail(`admin markFailed of a ${row.status} row: ${outcome}, model expects ${expected}`);
      if (outcome === 'applied') Object.assign(row, { status: 'FAILED', due: false });
      await checkInvariants(m, real);
    },
    toString: () => `adminMarkFailed(row #${pick})`,
  };
}

/**
 * An operator retry of a FAILED row races every idle relay's claim. Either order is allowed, so a
 * claim may take what was claimable before or after the retry; the table invariants (never two in
 * flight per key) must hold whichever won.
 */
export function retryDuringClaimsCommand(pick: number, limit: number): Cmd {
  return {
    check: (m) => m.rows.size > 0 && m.held.some((h) => h === null),
    async run(m, real) {
      const row = pickRow(m, pick, 'FAILED') as RowModel;
      const before = claimable(m);
      const wasFailed = row.status === 'FAILED';
      const saved = { ...row };
      if (wasFailed) Object.assign(row, { status: 'PENDING', retryCount: 0, due: true, expiries: 0 });
      const after = claimable(m);
      Object.assign(row, saved);
      const { claims, other } = await raceClaims(m, real, limit, () => real.admin.retry(row.id));
      const expected = wasFailed ? 'applied' : 'conflict';
      if (other.outcome !== expected)
        fail(`admin retry racing claims: ${other.outcome}, model expects ${expected}`);
      // A claimed row can only have overtaken the retried row if its claim came first (then the
      // row was still FAILED): mark what the claims overtook before applying the retry.
      for (const id of claims.flatMap((c) => c.ids)) markOvertaken(m, m.rows.get(id) as RowModel);
      if (other.outcome === 'applied')
        Object.assign(row, { status: 'PENDING', retryCount: 0, due: true, expiries: 0 });
      applyClaims(m, claims, new Set([...before, ...after]));
      await checkInvariants(m, real);
    },
    toString: () => `retryDuringClaims(row #${pick}, limit ${limit})`,
  };
}
