import type { Command } from 'commander';
import type { Context } from './command';
import { UsageError } from './errors';
import { countOutcomes, printActions, type ActionResult } from './output';
import { uuid } from './parse';
import { progress } from './progress';

/** Splits ids into batches of `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs `work` per batch (one audited transaction each) with a progress bar; collects results. */
export async function perBatch<T>(
  ctx: Context,
  label: string,
  batches: AsyncIterable<T[]> | Iterable<T[]>,
  total: number,
  work: (batch: T[]) => Promise<ActionResult[]>,
): Promise<ActionResult[]> {
  const bar = progress(ctx, label, total);
  const results: ActionResult[] = [];
  try {
    for await (const batch of batches) {
      const done = await work(batch);
      results.push(...done);
      bar.add(done.length, Math.max(total, results.length));
    }
  } finally {
    bar.stop();
  }
  return results;
}

/** The largest bound of one pass, a dry run's only one. */
const DRY_RUN_BOUND = 10_000;

/**
 * Repeats a bounded action (release, purge) until a pass changes fewer rows than its bound.
 * A dry run changes nothing, so it runs one pass with the largest bound instead; when that pass
 * reaches its bound, its count is a lower bound (`atLeast`): the real run may do more.
 */
export async function untilDrained(
  ctx: Context,
  label: string,
  dryRun: boolean,
  batchSize: number,
  pass: (limit: number) => Promise<number>,
): Promise<{ total: number; atLeast: boolean }> {
  if (dryRun) {
    const total = await pass(DRY_RUN_BOUND);
    return { total, atLeast: total >= DRY_RUN_BOUND };
  }
  const bar = progress(ctx, label, batchSize);
  let total = 0;
  try {
    for (;;) {
      const changed = await pass(batchSize);
      total += changed;
      bar.add(changed, total + (changed === batchSize ? batchSize : 0));
      if (changed < batchSize) return { total, atLeast: false };
    }
  } finally {
    bar.stop();
  }
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
  const { atLeast } = await untilDrained(ctx, action, dryRun, o.batchSize as number, async (limit) => {
    const batch = await release(limit);
    results.push(...batch.released.map((id) => ({ id, outcome: 'applied' })));
    for (const id of batch.running ?? []) running.add(id);
    return batch.released.length;
  });
  results.push(...[...running].map((id) => ({ id, outcome: 'running' })));
  return printActions(ctx, {
    action,
    dryRun,
    results,
    counts: countOutcomes(results),
    ...(atLeast ? { atLeast } : {}),
  });
}

/** Purge until drained; the answer counts rows under `counted` (deleted, purged). */
export async function runPurge(
  ctx: Context,
  action: string,
  o: { dryRun?: boolean; batchSize?: number },
  counted: string,
  purge: (limit: number) => Promise<number>,
): Promise<number> {
  const dryRun = o.dryRun === true;
  const { total, atLeast } = await untilDrained(ctx, action, dryRun, o.batchSize as number, purge);
  const counts = { [counted]: total };
  return printActions(ctx, { action, dryRun, results: [], counts, ...(atLeast ? { atLeast } : {}) });
}
