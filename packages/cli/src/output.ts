import { escapeUnshowable } from '@ferry/core/transport';
import type { Context } from './command';
import type { JsonTexts } from './exactJson';
import { INTERRUPTED_EXIT, type StopSignal } from './interrupt';

/**
 * The one way text reaches the operator's terminal: a line with every character a terminal acts
 * on or breaks a line at (controls, line separators, bidirectional controls) escaped as
 * `\uXXXX`, whatever the values in it hold (an event type, a tenant id, an error message).
 * JSON output goes through it too (printJson).
 */
export const printable = escapeUnshowable;

/**
 * The one way a time is written as text: ISO 8601 (toISOString), `-` for none. Never throws: the
 * core reads every time into a valid Date (a time beyond a Date's range as its nearest end,
 * `+275760-09-13T00:00:00.000Z`), and a Date that is none the less invalid is written `invalid`
 * instead of failing the whole listing with a RangeError (test/review88-time.test.ts).
 */
export function timeText(date: Date | null | undefined): string {
  if (date === null || date === undefined) return '-';
  return Number.isNaN(date.getTime()) ? 'invalid' : date.toISOString();
}

/**
 * What a bare word of a text line cannot hold: what printable escapes, a backslash, a leading
 * quote; whitespace, which separates a line's fields, and a comma, which separates a list's
 * items (an audit entry's ids).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_BARE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\\\s,]|^"/;

/**
 * A stored value as one field of a text line: bare when it needs no escape, else (a control, a
 * backslash, a leading quote, whitespace or a comma, or `-`, which a line writes for none) as a
 * JSON string, as the line's free-text fields (an error, an actor) are. printable alone wrote an
 * ESC byte and the six characters `\u001b` alike (review 102); a bare value with a space read as
 * two fields, and `x tenant=other` forged one (review 103).
 */
export function word(value: string): string {
  return value === '-' || value === '' || NOT_BARE.test(value) ? JSON.stringify(value) : value;
}

/** A text line on stdout, escaped (printable). */
export function printLine(ctx: Context, line: string): void {
  ctx.io.out(printable(line));
}

/** A text line on stderr (summaries, notes), escaped (printable). */
export function printNote(ctx: Context, line: string): void {
  ctx.io.err(printable(line));
}

/**
 * One JSON document on stdout. JSON.stringify escapes C0 controls but leaves DEL, C1, U+2028/9
 * and bidirectional controls raw; printable writes those as `\uXXXX` too, which JSON reads
 * back as the same string.
 */
export function printJson(ctx: Context, value: unknown): void {
  printJsonText(ctx, JSON.stringify(value));
}

/** A JSON document already written as text (jsonObject), escaped as printJson escapes. */
function printJsonText(ctx: Context, text: string): void {
  ctx.io.out(printable(text));
}

/**
 * `item` as a JSON object, as JSON.stringify writes it, except the fields `exact` names, written
 * as the JSON text it holds (a payload as PostgreSQL wrote it: exactJson.ts).
 */
function jsonObject(item: object, exact: JsonTexts = {}): string {
  const fields = Object.entries(item).flatMap(([key, value]) => {
    // JSON.stringify leaves out what it cannot write (undefined), as it does in an object.
    const text = (exact[key] ?? JSON.stringify(value)) as string | undefined;
    return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
  });
  return `{${fields.join(',')}}`;
}

/**
 * `{ items, nextCursor }` under --json (each item's `exact` fields as jsonObject writes them);
 * one line per item otherwise.
 */
export function printList<T extends object>(
  ctx: Context,
  command: string,
  page: { items: readonly T[]; nextCursor: string | null },
  line: (item: T) => string,
  exact: (item: T) => JsonTexts | undefined = () => undefined,
): void {
  if (ctx.json) {
    const items = page.items.map((item) => jsonObject(item, exact(item)));
    return printJsonText(
      ctx,
      `{"items":[${items.join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}`,
    );
  }
  for (const item of page.items) printLine(ctx, line(item));
  if (page.nextCursor !== null) printNote(ctx, `ferry ${command}: more rows: --cursor ${page.nextCursor}`);
}

/** `{ item }` under --json; `name: value` lines otherwise; the fields `exact` names as the JSON text it holds. */
export function printRecord(ctx: Context, item: object, exact: JsonTexts = {}): void {
  if (ctx.json) return printJsonText(ctx, `{"item":${jsonObject(item, exact)}}`);
  for (const [key, value] of Object.entries(item)) {
    const text = exact[key] ?? (value instanceof Date ? timeText(value) : JSON.stringify(value));
    printLine(ctx, `${key}: ${text}`);
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
  for (const [status, n] of Object.entries(stats.counts)) printLine(ctx, `${status} ${n}`);
  printLine(ctx, `total ${stats.total}`);
  printLine(ctx, `expiredLeases ${stats.expiredLeases}`);
  printLine(ctx, `oldestPendingAgeMs ${stats.oldestPendingAgeMs ?? '-'}`);
  if (stats.estimated.length > 0) printLine(ctx, `estimated ${stats.estimated.join(' ')}`);
}

export interface ActionResult {
  readonly id: string;
  /** applied, not_found, conflict, lost_claim; accepted / duplicate for a replay. */
  readonly outcome: string;
  /** Why, for a conflict: what was expected and found (conflict.ts); printed after the outcome in text too. */
  readonly detail?: string;
  readonly status?: string;
  readonly rowVersion?: number;
  /** The new receipt of a replay. */
  readonly replayId?: string;
  /** The request id of a replay (`--request-id`, or the one made up): repeating it is a duplicate. */
  readonly requestId?: string;
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
  /** A signal stopped the command before its end (untilInterrupted). */
  readonly interrupted?: Interrupted;
}

/**
 * What a signal left undone: the ids given that were not attempted are results of their own
 * (NOT_ATTEMPTED); `more` says that rows beyond the answered ones may match and were not attempted
 * either (a listing or a drain the signal cut short: run the command again for them).
 */
export interface Interrupted {
  readonly signal: StopSignal;
  readonly more: boolean;
}

/** The outcome of an id a signal, or a failure part-way, stopped the command before. */
export const NOT_ATTEMPTED = 'not_attempted';

/** The outcome of an id whose transaction failed part-way and rolled back (`detail`: the error's code). */
export const NOT_APPLIED = 'not_applied';

/** The outcome of an id whose transaction's COMMIT went unanswered (FERRY_OUTCOME_UNKNOWN): list it to know. */
export const OUTCOME_UNKNOWN = 'outcome_unknown';

const OK = new Set(['applied', 'accepted', 'duplicate']);

export function countOutcomes(results: readonly ActionResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { outcome } of results) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

/**
 * Prints one outcome per id and a summary; exit 1 unless every outcome is a success, 130 / 143
 * when a signal stopped the command before its end (INTERRUPTED_EXIT).
 */
export function printActions(ctx: Context, answer: ActionAnswer): number {
  const failed = answer.results.filter((r) => !OK.has(r.outcome)).length;
  if (ctx.json) printJson(ctx, answer);
  else printActionText(ctx, answer);
  if (answer.interrupted !== undefined) return INTERRUPTED_EXIT[answer.interrupted.signal];
  return failed === 0 ? 0 : 1;
}

/** `; interrupted by SIGINT: not attempted: the 3 ids marked not_attempted and ...`. */
function interruptedNote({ signal, more }: Interrupted, counts: ActionAnswer['counts']): string {
  const left = counts[NOT_ATTEMPTED] ?? 0;
  const parts = [
    ...(left > 0 ? [`the ${left} id${left === 1 ? '' : 's'} marked ${NOT_ATTEMPTED}`] : []),
    ...(more ? ['whatever it had not reached yet (run it again for the rest)'] : []),
  ];
  return `; interrupted by ${signal}: not attempted: ${parts.join(' and ')}`;
}

/** The ids a result names besides its own, as --json has them: ` replayId=… requestId=…` (a replay's). */
function idsOf(result: ActionResult): string {
  const ids = { replayId: result.replayId, requestId: result.requestId };
  return Object.entries(ids)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}=${value}`)
    .join('');
}

/**
 * `id outcome` lines on stdout (with idsOf, then `: detail` for a conflict) and the summary
 * (`counts`, then `note`) on stderr.
 */
export function printActionText(ctx: Context, answer: ActionAnswer, note = ''): void {
  const suffix = answer.dryRun ? ' (dry run)' : '';
  for (const result of answer.results) {
    const detail = result.detail === undefined ? '' : `: ${result.detail}`;
    printLine(ctx, `${result.id} ${result.outcome}${idsOf(result)}${suffix}${detail}`);
  }
  const bound = answer.atLeast === true ? 'at least ' : '';
  const summary = Object.entries(answer.counts).map(([k, n]) => `${bound}${n} ${k}`);
  const stopped = answer.interrupted === undefined ? '' : interruptedNote(answer.interrupted, answer.counts);
  const tail = answer.dryRun ? '; dry run: nothing changed' : '';
  printNote(ctx, `ferry ${answer.action}: ${summary.join(', ') || 'nothing to do'}${note}${stopped}${tail}`);
}
