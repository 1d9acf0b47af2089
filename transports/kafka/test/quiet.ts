import { createHook } from 'node:async_hooks';
import pino from 'pino';
import type { TransportConsumerEvent } from '@ferry/core/transport';
import { waitFor } from './support';
import { activityWithin } from './silentRoute';
import { outcomeWithin } from '../../../test-support/deadlines';

/**
 * What "close() left nothing running" is measured with: the process's active resources
 * (sockets, connect requests, ref'd timers) by type, and every log line a logger received.
 */
export type ResourceCounts = ReadonlyMap<string, number>;

/** The process's active resources counted by type (process.getActiveResourcesInfo()). */
export function activeResources(): ResourceCounts {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

const same = (a: ResourceCounts, b: ResourceCounts): boolean =>
  a.size === b.size && [...a].every(([type, count]) => b.get(type) === count);

/**
 * The resources active once the test's own setup has settled (a released port's server, a
 * logger's first write): two samples one poll apart that agree.
 */
export async function settledResources(): Promise<ResourceCounts> {
  let previous = activeResources();
  let settled: ResourceCounts | null = null;
  await waitFor(
    () => {
      const current = activeResources();
      if (same(previous, current)) settled = current;
      previous = current;
      return settled !== null;
    },
    () => `active resources never settled: ${[...previous].join(', ')}`,
  );
  return settled ?? previous;
}

/** The types with more active resources now than in `baseline`, e.g. `Timeout +1`. */
export function resourcesAbove(baseline: ResourceCounts): string[] {
  return [...activeResources()]
    .filter(([type, count]) => count > (baseline.get(type) ?? 0))
    .map(([type, count]) => `${type} +${count - (baseline.get(type) ?? 0)}`);
}

/**
 * Waits until no more resources are active than in `baseline`. The deadline only covers
 * sockets that close() destroyed and that leave on the next turns of the event loop; a client
 * still retrying a connect keeps a socket or a retry timer for seconds and fails it.
 */
export async function expectBackToBaseline(baseline: ResourceCounts, deadlineMs = 2_000): Promise<void> {
  await waitFor(
    () => resourcesAbove(baseline).length === 0,
    () => `still active after close(): ${resourcesAbove(baseline).join(', ')}`,
    deadlineMs,
  );
}

export interface RecordingLogger {
  readonly logger: pino.Logger;
  /** Every line, with whether it came after markClosed(). */
  readonly lines: { readonly afterClose: boolean; readonly msg: string }[];
  /** Call when close() resolved: every later line is a line after close. */
  markClosed(): void;
  linesAfterClose(): string[];
}

/** A logger that records every line at every level (the clients' debug lines included). */
export function recordingLogger(): RecordingLogger {
  let closed = false;
  const lines: { afterClose: boolean; msg: string }[] = [];
  const logger = pino(
    { level: 'trace' },
    {
      write: (line: string) => {
        lines.push({
          afterClose: closed,
          msg: String((JSON.parse(line) as { msg?: unknown }).msg),
        });
      },
    },
  );
  return {
    logger,
    lines,
    markClosed: () => {
      closed = true;
    },
    linesAfterClose: () => lines.filter((line) => line.afterClose).map((line) => line.msg),
  };
}

/**
 * The TCP connects the process starts from now on, and the sockets opened from now on that are
 * not closed yet (unref'd ones too, which process.getActiveResourcesInfo() leaves out), until
 * stop().
 */
export function countConnects(): { count(): number; openSockets(): number; stop(): void } {
  let count = 0;
  const sockets = new Set<number>();
  const hook = createHook({
    init: (id, type) => {
      if (type === 'TCPCONNECTWRAP') count += 1;
      if (type === 'TCPWRAP') sockets.add(id);
    },
    destroy: (id) => void sockets.delete(id),
  }).enable();
  return { count: () => count, openSockets: () => sockets.size, stop: () => void hook.disable() };
}

/**
 * A consumer's `closing` resolves within `closeTimeoutMs` without reaching it (no "did not finish
 * closing" on `log`), with the closed `disconnected` as the last event; then for `watchedMs` no
 * connection opens, no heartbeat starts, nothing is logged to `log` and no event follows
 * (reviews 126, 129).
 */
export async function expectNothingAfterClose(
  closing: Promise<void>,
  log: RecordingLogger,
  events: readonly TransportConsumerEvent[],
  { closeTimeoutMs, watchedMs }: { readonly closeTimeoutMs: number; readonly watchedMs: number },
): Promise<void> {
  expect(await outcomeWithin(closing, closeTimeoutMs + 10_000)).toEqual({ value: undefined });
  log.markClosed();
  const count = events.length;
  expect(log.lines.filter((line) => line.msg.includes('did not finish closing'))).toEqual([]);
  expect(events[count - 1]).toMatchObject({ type: 'disconnected', reason: 'closed' });
  expect(await activityWithin(watchedMs)).toEqual({ connects: [], heartbeats: 0 });
  expect(log.linesAfterClose()).toEqual([]);
  expect(events.slice(count)).toEqual([]);
}
