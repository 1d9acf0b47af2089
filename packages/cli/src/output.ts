import type { Context } from './command';

export function printJson(ctx: Context, value: unknown): void {
  ctx.io.out(JSON.stringify(value));
}

/** `{ items, nextCursor }` under --json; one line per item otherwise. */
export function printList<T>(
  ctx: Context,
  command: string,
  page: { items: readonly T[]; nextCursor: string | null },
  line: (item: T) => string,
): void {
  if (ctx.json) return printJson(ctx, page);
  for (const item of page.items) ctx.io.out(line(item));
  if (page.nextCursor !== null) ctx.io.err(`ferry ${command}: more rows: --cursor ${page.nextCursor}`);
}

/** `{ item }` under --json; `name: value` lines otherwise. */
export function printRecord(ctx: Context, item: object): void {
  if (ctx.json) return printJson(ctx, { item });
  for (const [key, value] of Object.entries(item)) {
    const text = value instanceof Date ? value.toISOString() : JSON.stringify(value);
    ctx.io.out(`${key}: ${text}`);
  }
}

/** The one stats shape for outbox and inbox. */
export interface StatsAnswer {
  readonly kind: 'outbox' | 'inbox';
  readonly scope: string;
  readonly counts: Readonly<Record<string, number>>;
  readonly total: number;
  readonly expiredLeases: number;
  readonly oldestPendingAgeMs: number | null;
  /** Statuses whose count is PostgreSQL's estimate (SENT / COMPLETED beyond 10,000 rows). */
  readonly estimated: readonly string[];
}

export function printStats(ctx: Context, stats: StatsAnswer): void {
  if (ctx.json) return printJson(ctx, stats);
  for (const [status, n] of Object.entries(stats.counts)) ctx.io.out(`${status} ${n}`);
  ctx.io.out(`total ${stats.total}`);
  ctx.io.out(`expiredLeases ${stats.expiredLeases}`);
  ctx.io.out(`oldestPendingAgeMs ${stats.oldestPendingAgeMs ?? '-'}`);
  if (stats.estimated.length > 0) ctx.io.out(`estimated ${stats.estimated.join(' ')}`);
}

export interface ActionResult {
  readonly id: string;
  /** applied, not_found, conflict, lost_claim; accepted / duplicate for a replay. */
  readonly outcome: string;
  /** Why, for a conflict. */
  readonly detail?: string;
  readonly status?: string;
  readonly rowVersion?: number;
  /** The new receipt of a replay. */
  readonly replayId?: string;
}

/** The one answer of every mutating command. */
export interface ActionAnswer {
  readonly action: string;
  readonly dryRun: boolean;
  readonly results: readonly ActionResult[];
  /** Outcomes counted, plus totals such as `deleted` / `purged` for bulk actions. */
  readonly counts: Readonly<Record<string, number>>;
  /** A bulk dry run that reached its bound: the counts are lower bounds (the real run may do more). */
  readonly atLeast?: boolean;
}

const OK = new Set(['applied', 'accepted', 'duplicate']);

export function countOutcomes(results: readonly ActionResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { outcome } of results) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

/** Prints one outcome per id and a summary; exit 1 unless every outcome is a success. */
export function printActions(ctx: Context, answer: ActionAnswer): number {
  const failed = answer.results.filter((r) => !OK.has(r.outcome)).length;
  if (ctx.json) {
    printJson(ctx, answer);
  } else {
    const suffix = answer.dryRun ? ' (dry run)' : '';
    for (const { id, outcome } of answer.results) ctx.io.out(`${id} ${outcome}${suffix}`);
    const bound = answer.atLeast === true ? 'at least ' : '';
    const summary = Object.entries(answer.counts).map(([k, n]) => `${bound}${n} ${k}`);
    const tail = answer.dryRun ? '; dry run: nothing changed' : '';
    ctx.io.err(`ferry ${answer.action}: ${summary.join(', ') || 'nothing to do'}${tail}`);
  }
  return failed === 0 ? 0 : 1;
}
