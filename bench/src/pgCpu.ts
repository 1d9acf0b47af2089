import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (Linux: 100). */
const TICKS_PER_SECOND = 100;

/** CPU ticks (user + system) so far of each of this machine's PostgreSQL processes, by pid. */
export type PostgresCpu = ReadonlyMap<string, number>;

/**
 * CPU ticks (user + system) used so far by each of this machine's PostgreSQL processes (those
 * named `postgres`), from /proc; undefined where /proc is not readable (not Linux).
 */
export function postgresCpu(): PostgresCpu | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const ticks = new Map<string, number>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
    const fields = stat.slice(close + 2).split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    ticks.set(entry, Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

/**
 * The CPU (ms) PostgreSQL spent between two readings of postgresCpu: each process's growth, a
 * process started meanwhile counted whole. The bench runs PostgreSQL on the same machine, so this
 * is what the database spent across a timed run (with whatever else used it meanwhile). A backend
 * that exited meanwhile drops its share (the scenarios keep their pools open across a run), so
 * the figure is never negative; a process's share dropped by a sum of all processes made it so
 * when another program's connections ended meanwhile (a test run beside the bench). Resolution is
 * one tick (10 ms) per process.
 */
export function postgresCpuMsBetween(before: PostgresCpu, after: PostgresCpu): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += Math.max(0, now - (before.get(pid) ?? 0));
  return (ticks * 1000) / TICKS_PER_SECOND;
}
