import { isFerryError } from '@ferry/core';
import type { Command } from 'commander';
import type { Context } from './command';
import { UsageError } from './errors';
import { keepingDone } from './failure';
import { stopNotes, stoppedBy, untilInterrupted, type Interruption } from './interrupt';
import {
  countOutcomes,
  NOT_APPLIED,
  NOT_ATTEMPTED,
  OUTCOME_UNKNOWN,
  printActions,
  printNote,
  type ActionAnswer,
  type ActionResult,
  type Interrupted,
} from './output';
import { uuid } from './parse';
import { progress } from './progress';

/** Splits ids into batches of `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A mutating command's name and whether it is a dry run: the head of its answer. */
export interface Acting {
  readonly action: string;
  readonly dryRun: boolean;
}

/** A mutation's notes on stderr when a signal arrives (untilInterrupted). */
function notes(ctx: Context, action: string): Interruption {
  return stopNotes((line) => printNote(ctx, line), action);
}

/** What one transaction of a bulk command covers: one id (requeue, mark-failed) or a whole batch (retry). */
export type Unit = 'id' | 'batch';

/**
 * Runs `work` per batch with a progress bar and prints the answer, one outcome per id. `work`
 * records each outcome once it is committed (a batch's transaction, or each id's, as `unit`
 * says), so a failure at a later batch is answered with what the earlier ones applied
 * (FailedPartway), exit 1, and with every id known then and not answered (leftByFailure): those
 * the failing transaction held NOT_APPLIED, the others NOT_ATTEMPTED.
 *
 * A first SIGINT / SIGTERM (untilInterrupted) starts no other batch, and `work` acting id by id
 * starts no other id once `stop` aborted; what is in flight finishes. The ids of `batches` known
 * then and not answered are answered NOT_ATTEMPTED: all of them when `batches` is an array (ids
 * given), those of the page in hand for a listing, whose later pages are not read (`more`). Exit
 * 130 / 143 when something was left so; a signal during the last id changes nothing.
 */
export async function perBatch<T>(
  ctx: Context,
  acting: Acting,
  batches: readonly T[][] | AsyncIterable<T[]>,
  total: number,
  idOf: (item: T) => string,
  unit: Unit,
  work: (batch: T[], record: (result: ActionResult) => void, stop: AbortSignal) => Promise<void>,
): Promise<number> {
  const bar = progress(ctx, acting.action, total);
  const results: ActionResult[] = [];
  let interrupted: Interrupted | undefined;
  const answer = (): ActionAnswer => ({
    ...acting,
    results,
    counts: countOutcomes(results),
    ...(interrupted === undefined ? {} : { interrupted }),
  });
  const record = (result: ActionResult): void => {
    results.push(result);
    bar.add(1, Math.max(total, results.length));
  };
  return untilInterrupted(
    async (stop) => {
      try {
        await keepingDone(answer, async () => {
          const unreached: string[] = [];
          let more = false;
          let started = 0;
          let inFlight: T[] | undefined;
          try {
            for await (const batch of batches) {
              started += 1;
              inFlight = batch;
              if (!stop.aborted) await work(batch, record, stop);
              inFlight = undefined;
              if (!stop.aborted) continue;
              unreached.push(...batch.map(idOf));
              // A listing's next page is not read: what it holds is not known.
              if (!Array.isArray(batches)) {
                more = true;
                break;
              }
            }
          } catch (error) {
            const later = Array.isArray(batches) ? batches.slice(started).flat() : [];
            leftByFailure(error, results, (inFlight ?? []).map(idOf), later.map(idOf), unit);
            throw error;
          }
          interrupted = leftOut(stop, results, unreached, more);
        });
      } finally {
        bar.stop();
      }
      return printActions(ctx, answer());
    },
    notes(ctx, acting.action),
  );
}

/**
 * After a failure part-way that followed some answered ids (else the error alone answers: nothing
 * was applied): the ids the failing transaction held, NOT_APPLIED (it rolled back; `detail` the
 * error's code), or OUTCOME_UNKNOWN when its COMMIT's answer was lost (FERRY_OUTCOME_UNKNOWN); the
 * other ids known and not answered, NOT_ATTEMPTED. `inFlight`: the ids of the batch in flight;
 * acting id by id (`unit`), only its first unanswered id was being changed. A listing's later
 * pages are not known: the failure's hint says to list again.
 */
function leftByFailure(
  error: unknown,
  results: ActionResult[],
  inFlight: readonly string[],
  later: readonly string[],
  unit: Unit,
): void {
  if (results.length === 0) return;
  const answered = new Set(results.map((r) => r.id));
  const open = inFlight.filter((id) => !answered.has(id));
  const held = unit === 'id' ? open.slice(0, 1) : open;
  const code = isFerryError(error) ? error.code : 'FERRY_UNEXPECTED';
  const outcome = code === 'FERRY_OUTCOME_UNKNOWN' ? OUTCOME_UNKNOWN : NOT_APPLIED;
  results.push(...held.map((id) => ({ id, outcome, detail: code })));
  const rest = [...open.slice(held.length), ...later].filter((id) => !answered.has(id));
  results.push(...rest.map((id) => ({ id, outcome: NOT_ATTEMPTED })));
}

/**
 * After a signal (`stop` aborted): the ids of `unreached` not answered join `results` as
 * NOT_ATTEMPTED, and the interruption is what was left out. Nothing left out (the signal came
 * during the last id), or no signal: undefined.
 */
function leftOut(
  stop: AbortSignal,
  results: ActionResult[],
  unreached: readonly string[],
  more: boolean,
): Interrupted | undefined {
  const signal = stoppedBy(stop);
  const answered = new Set(results.map((r) => r.id));
  const left = unreached.filter((id) => !answered.has(id));
  if (signal === undefined || (left.length === 0 && !more)) return undefined;
  results.push(...left.map((id) => ({ id, outcome: NOT_ATTEMPTED })));
  return { signal, more };
}

/** The largest bound of one pass (core's release and purge limits), a dry run's only one. */
const LARGEST_BOUND = 10_000;

/** One pass of a bounded action: the rows it changed, and whether another pass may find more. */
export interface Pass {
  readonly changed: number;
  readonly more: boolean;
}

/** What untilDrained did: rows changed, a lower bound (`atLeast`), stopped by a signal before the end. */
export interface Drained {
  readonly total: number;
  readonly atLeast: boolean;
  readonly interrupted?: Interrupted;
}

/**
 * Repeats a bounded action (release, purge) until a pass says there is no more (it changed fewer
 * rows than its bound), or a signal stopped it between passes (`stop`, untilInterrupted). A dry
 * run changes nothing, so it runs one pass with the largest bound instead; when that pass finds
 * more, its count is a lower bound (`atLeast`): the real run may do more.
 */
export async function untilDrained(
  ctx: Context,
  label: string,
  dryRun: boolean,
  batchSize: number,
  pass: (limit: number) => Promise<Pass>,
  stop: AbortSignal,
): Promise<Drained> {
  if (dryRun) {
    const { changed, more } = await pass(LARGEST_BOUND);
    return { total: changed, atLeast: more };
  }
  const bar = progress(ctx, label, batchSize);
  let total = 0;
  try {
    for (;;) {
      const { changed, more } = await pass(batchSize);
      total += changed;
      bar.add(changed, total + (more ? batchSize : 0));
      if (!more) return { total, atLeast: false };
      const signal = stoppedBy(stop);
      if (signal !== undefined) return { total, atLeast: false, interrupted: { signal, more: true } };
    }
  } finally {
    bar.stop();
  }
}

/**
 * untilDrained with a signal stopping it between passes, and its answer printed: `answer()` is
 * what was done so far (also before a failure), plus `atLeast` and `interrupted` when they apply.
 */
async function drainAnswering(
  ctx: Context,
  answer: () => ActionAnswer,
  batchSize: number,
  pass: (limit: number) => Promise<Pass>,
): Promise<number> {
  const { action, dryRun } = answer();
  return untilInterrupted(
    async (stop) => {
      const { atLeast, interrupted } = await keepingDone(answer, () =>
        untilDrained(ctx, action, dryRun, batchSize, pass, stop),
      );
      return printActions(ctx, {
        ...answer(),
        ...(atLeast ? { atLeast } : {}),
        ...(interrupted === undefined ? {} : { interrupted }),
      });
    },
    notes(ctx, action),
  );
}

export interface ReleaseOptions {
  dryRun?: boolean;
  batchSize?: number;
  claimToken?: string;
  force?: boolean;
}

/** --claim-token and --force, shared by outbox and inbox release; `forceNote` ends --force's help. */
export function releasing(command: Command, what: string, forceNote = ''): Command {
  return command
    .option('--claim-token <token>', 'only this claim token', uuid)
    .option(
      '--force',
      `release the token's ${what} before their lease expires (the process is dead)${forceNote}`,
    );
}

/**
 * Release until drained, one outcome per id: 'applied', or 'running' for a receipt a forced
 * release left alone because its handler is still running (once, however many batches saw it).
 * A running receipt stays a candidate of every later pass and spends a slot of its bound (core
 * picks `limit` candidates, then tries their locks), so each pass's bound is the batch size plus
 * the receipts known running: a running receipt at the head of the claim cannot end the drain
 * while idle ones of the same claim are still PROCESSING. Drained when a pass's candidates do not
 * fill its bound, or when it found nothing new (every candidate known running).
 */
export async function runRelease(
  ctx: Context,
  action: string,
  o: ReleaseOptions,
  release: (
    limit: number,
  ) => Promise<{ readonly released: readonly string[]; readonly running?: readonly string[] }>,
): Promise<number> {
  if (o.force === true && o.claimToken === undefined) throw new UsageError('--force needs --claim-token');
  const dryRun = o.dryRun === true;
  const results: ActionResult[] = [];
  const running = new Set<string>();
  const answer = (): ActionAnswer => {
    const all = [...results, ...[...running].map((id) => ({ id, outcome: 'running' }))];
    return { action, dryRun, results: all, counts: countOutcomes(all) };
  };
  const pass = async (limit: number): Promise<Pass> => {
    const bound = Math.min(limit + running.size, LARGEST_BOUND);
    const batch = await release(bound);
    const stillRunning = batch.running ?? [];
    const found = batch.released.length + stillRunning.filter((id) => !running.has(id)).length;
    for (const id of stillRunning) running.add(id);
    // A receipt whose handler ended since an earlier pass saw it running is released now.
    for (const id of batch.released) running.delete(id);
    results.push(...batch.released.map((id) => ({ id, outcome: 'applied' })));
    const spent = batch.released.length + stillRunning.length;
    return { changed: batch.released.length, more: spent >= bound && found > 0 };
  };
  return drainAnswering(ctx, answer, o.batchSize as number, pass);
}

/** Purge until drained; the answer counts rows under `counted` (deleted, purged), also those before a failure. */
export async function runPurge(
  ctx: Context,
  action: string,
  o: { dryRun?: boolean; batchSize?: number },
  counted: string,
  purge: (limit: number) => Promise<number>,
): Promise<number> {
  const dryRun = o.dryRun === true;
  let total = 0;
  const answer = (): ActionAnswer => ({ action, dryRun, results: [], counts: { [counted]: total } });
  const pass = async (limit: number): Promise<Pass> => {
    const purged = await purge(limit);
    total += purged;
    return { changed: purged, more: purged >= limit };
  };
  return drainAnswering(ctx, answer, o.batchSize as number, pass);
}
