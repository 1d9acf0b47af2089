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

/**
 * Repeats a bounded action (release, purge) until a pass changes fewer rows than its bound.
 * A dry run changes nothing, so it runs one pass with the largest bound instead.
 */
export async function untilDrained(
  ctx: Context,
  label: string,
  dryRun: boolean,
  batchSize: number,
  pass: (limit: number) => Promise<number>,
): Promise<number> {
  if (dryRun) return pass(10_000);
  const bar = progress(ctx, label, batchSize);
  let total = 0;
  try {
    for (;;) {
      const changed = await pass(batchSize);
      total += changed;
      bar.add(changed, total + (changed === batchSize ? batchSize : 0));
      if (changed < batchSize) return total;
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

/** --claim-token and --force, shared by outbox and inbox release. */
export function releasing(command: Command, what: string): Command {
  return command
    .option('--claim-token <token>', 'only this claim token', uuid)
    .option('--force', `release the token's ${what} before their lease expires (the process is dead)`);
}

/** Release until drained, one outcome per released id. */
export async function runRelease(
  ctx: Context,
  action: string,
  o: ReleaseOptions,
  release: (limit: number) => Promise<readonly string[]>,
): Promise<number> {
  if (o.force === true && o.claimToken === undefined) throw new UsageError('--force needs --claim-token');
  const dryRun = o.dryRun === true;
  const results: ActionResult[] = [];
  await untilDrained(ctx, action, dryRun, o.batchSize as number, async (limit) => {
    const ids = await release(limit);
    results.push(...ids.map((id) => ({ id, outcome: 'applied' })));
    return ids.length;
  });
  return printActions(ctx, { action, dryRun, results, counts: countOutcomes(results) });
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
  const total = await untilDrained(ctx, action, dryRun, o.batchSize as number, purge);
  return printActions(ctx, { action, dryRun, results: [], counts: { [counted]: total } });
}
