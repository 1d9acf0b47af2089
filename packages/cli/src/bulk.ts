import type { Command } from 'commander';
import type { Context } from './command';
import { UsageError } from './errors';
import { keepingDone } from './failure';
import { countOutcomes, printActions, type ActionAnswer, type ActionResult } from './output';
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

/**
 * Runs `work` per batch with a progress bar and prints the answer, one outcome per id. `work`
 * records each outcome once it is committed (a batch's transaction, or each id's), so a failure
 * at a later batch is answered with what the earlier ones applied (FailedPartway), exit 1.
 */
export async function perBatch<T>(
  ctx: Context,
  acting: Acting,
  batches: AsyncIterable<T[]> | Iterable<T[]>,
  total: number,
  work: (batch: T[], record: (result: ActionResult) => void) => Promise<void>,
): Promise<number> {
  const bar = progress(ctx, acting.action, total);
  const results: ActionResult[] = [];
  const answer = (): ActionAnswer => ({ ...acting, results, counts: countOutcomes(results) });
  try {
    await keepingDone(answer, async () => {
      for await (const batch of batches) {
        await work(batch, (result) => {
          results.push(result);
          bar.add(1, Math.max(total, results.length));
        });
      }
    });
  } finally {
    bar.stop();
  }
  return printActions(ctx, answer());
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

/** Release until drained, one outcome per released id; a failure part-way names the ids released before it. */
export async function runRelease(
  ctx: Context,
  action: string,
  o: ReleaseOptions,
  release: (limit: number) => Promise<readonly string[]>,
): Promise<number> {
  if (o.force === true && o.claimToken === undefined) throw new UsageError('--force needs --claim-token');
  const dryRun = o.dryRun === true;
  const results: ActionResult[] = [];
  const answer = (): ActionAnswer => ({ action, dryRun, results, counts: countOutcomes(results) });
  await keepingDone(answer, () =>
    untilDrained(ctx, action, dryRun, o.batchSize as number, async (limit) => {
      const ids = await release(limit);
      results.push(...ids.map((id) => ({ id, outcome: 'applied' })));
      return ids.length;
    }),
  );
  return printActions(ctx, answer());
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
  await keepingDone(answer, () =>
    untilDrained(ctx, action, dryRun, o.batchSize as number, async (limit) => {
      const purged = await purge(limit);
      total += purged;
      return purged;
    }),
  );
  return printActions(ctx, answer());
}
