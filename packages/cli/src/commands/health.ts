import { createHealth, type HealthDetails } from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import type { Context } from '../command';
import { printJson, printLine, printNote } from '../output';
import { MAX_TIMER_MS } from '@ferry/core/transport';
import { durationBetween, nonNegativeInt } from '../parse';

interface HealthCliOptions {
  maxFailed?: number;
  maxDead?: number;
  maxPendingAge?: number;
  timeout?: number;
}

/** `--timeout` of health and top: each probe's deadline, a timer (1 ms to MAX_TIMER_MS). */
export const PROBE_TIMEOUT = durationBetween(1, MAX_TIMER_MS);
export const PROBE_TIMEOUT_HELP = 'deadline per probe (default 5s)';

export function healthOf(ctx: Context, o: HealthCliOptions): Promise<HealthDetails> {
  return ctx.db((db) =>
    createHealth({
      db,
      checkTimeoutMs: o.timeout,
      outboxThresholds: { maxFailed: o.maxFailed, maxOldestPendingAgeMs: o.maxPendingAge },
      inboxThresholds: { maxDead: o.maxDead, maxOldestPendingAgeMs: o.maxPendingAge },
    }).details(),
  );
}

export function registerHealth(program: Command, ctx: Context): void {
  program
    .command('health')
    .description('database, schema and backlog against thresholds; exit 0 healthy, 1 not (for probes)')
    .option('--max-failed <n>', 'FAILED outbox events tolerated (default 0)', nonNegativeInt())
    .option('--max-dead <n>', 'DEAD inbox receipts tolerated (default 0)', nonNegativeInt())
    .option(
      '--max-pending-age <age>',
      'oldest pending age tolerated (default 5m)',
      durationBetween(0, Number.MAX_SAFE_INTEGER),
    )
    .option('--timeout <age>', PROBE_TIMEOUT_HELP, PROBE_TIMEOUT)
    .action(
      act<HealthCliOptions>(ctx, async (o) => {
        const details = await healthOf(ctx, o);
        if (ctx.json) printJson(ctx, details);
        else for (const c of details.checks) printLine(ctx, `${c.status} ${c.name}: ${c.detail}`);
        if (!ctx.json) printNote(ctx, `ferry health: ${details.status}`);
        return details.status === 'up' ? 0 : 1;
      }),
    );
}
