import type { HealthDetails } from '@ferry/core';
import type { Command } from 'commander';
import { act } from '../act';
import type { Context } from '../command';
import { printable, printJson, printLine, timeText } from '../output';
import { abortableDelay, clearableAny, MAX_TIMER_MS } from '@ferry/core/transport';
import { durationBetween, positiveInt } from '../parse';
import { healthOf, PROBE_TIMEOUT, PROBE_TIMEOUT_HELP } from './health';
import { untilInterrupted } from '../interrupt';

interface TopOptions {
  interval: number;
  iterations?: number;
  /** Each probe's deadline, as health's --timeout (default 5 s). */
  timeout?: number;
}

/** One refresh's counts; a count whose read failed is undefined (no baseline for the next rate). */
interface Sample {
  readonly at: number;
  readonly sent: number | undefined;
  readonly completed: number | undefined;
}

function age(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 60_000)}m`;
}

/**
 * The growth of a count per second since the last refresh; '-' on the first, after a refresh
 * whose read failed (a failed read is no count of 0: the rate resumes after two good reads), and
 * when the count went down (a purge of SENT / COMPLETED rows between two refreshes is not a
 * negative rate).
 */
function rate(now: Sample, before: Sample | undefined, key: 'sent' | 'completed'): string {
  const [current, previous] = [now[key], before?.[key]];
  if (!before || current === undefined || previous === undefined) return '-';
  if (now.at <= before.at || current < previous) return '-';
  return ((current - previous) / ((now.at - before.at) / 1000)).toFixed(1);
}

function view(d: HealthDetails, now: Sample, before: Sample | undefined): string[] {
  const o = d.outbox;
  const i = d.inbox;
  const outbox = o
    ? `outbox pending=${o.pending} processing=${o.processing} sent=${o.sent} FAILED=${o.failed} ` +
      `expired=${o.expiredLeases} sent/s=${rate(now, before, 'sent')} oldest=${age(o.oldestPendingAgeMs)}`
    : 'outbox unavailable';
  const inbox = i
    ? `inbox pending=${i.counts.PENDING + i.counts.RETRYABLE} processing=${i.counts.PROCESSING} ` +
      `completed=${i.counts.COMPLETED} DEAD=${i.counts.DEAD} expired=${i.expiredLeases} ` +
      `completed/s=${rate(now, before, 'completed')} oldest=${age(i.oldestPendingAgeMs)}`
    : 'inbox unavailable';
  return [`${timeText(new Date(now.at))} ${d.status}`, outbox, inbox];
}

/** Waits `ms`, or until `stop` aborts; its listener on `stop` is removed either way (abortableDelay). */
function pause(ms: number, stop: AbortSignal): Promise<void> {
  return abortableDelay(ms, stop).catch(() => undefined);
}

/**
 * Refreshes until `--iterations`, a signal (Ctrl-C: untilInterrupted) or the reader of standard
 * output going away (CliIo.closed: `ferry top | head -3`) stops it; exit 0.
 */
async function top(ctx: Context, o: TopOptions, signal: AbortSignal): Promise<number> {
  const joined = clearableAny(ctx.io.closed === undefined ? [signal] : [signal, ctx.io.closed]);
  try {
    return await refresh(ctx, o, joined.signal);
  } finally {
    joined.clear();
  }
}

/** The refresh loop of top(), until `stop` aborts or `--iterations` ran. */
async function refresh(ctx: Context, o: TopOptions, stop: AbortSignal): Promise<number> {
  let before: Sample | undefined;
  for (let n = 0; o.iterations === undefined || n < o.iterations; n += 1) {
    if (n > 0) await pause(o.interval, stop);
    if (stop.aborted) break;
    const details = await healthOf(ctx, { timeout: o.timeout });
    const now = {
      at: Date.now(),
      sent: details.outbox?.sent,
      completed: details.inbox?.counts.COMPLETED,
    };
    if (ctx.json) printJson(ctx, { at: timeText(new Date(now.at)), ...details });
    else if (ctx.io.isTTY) ctx.io.out(`\x1b[2J\x1b[H${view(details, now, before).map(printable).join('\n')}`);
    else printLine(ctx, view(details, now, before).join(' | '));
    before = now;
  }
  return 0;
}

export function registerTop(program: Command, ctx: Context): void {
  program
    .command('top')
    .alias('watch')
    .description(
      'a live view: backlog, send / completion rates, oldest ages, FAILED / DEAD (plain lines when not a TTY)',
    )
    .option('--interval <age>', 'refresh period', durationBetween(1, MAX_TIMER_MS), 2_000)
    .option('--iterations <n>', 'stop after n refreshes (default: until Ctrl-C)', positiveInt())
    .option('--timeout <age>', PROBE_TIMEOUT_HELP, PROBE_TIMEOUT)
    .action(act<TopOptions>(ctx, (o) => untilInterrupted((stop) => top(ctx, o, stop))));
}
